//! `ruststream-interop`: drives the real `sea-streamer-file` crate so the TypeScript codec can be
//! checked against it, message for message.
//!
//!   ruststream-interop decode <file>
//!       One JSON object per line: a `header` line, a `message` line per frame, then an `end` line
//!       (`eos` when the end-of-stream marker was read, `eof` when the bytes ran out).
//!       A checksum or format error is printed to stderr and exits with status 2.
//!   ruststream-interop write <file> <json-lines> [--interval BYTES] [--eos]
//!       Writes the `message` lines of <json-lines> (same shape as `decode` prints) with the
//!       crate's own `MessageSink`, then ends the file (with the end-of-stream marker if --eos).
//!
//!   ruststream-interop bench-write <file> <count> <payload-bytes> [--append]
//!   ruststream-interop bench-replay <file>
//!   ruststream-interop bench-tail <file> <count>
//!       Benchmark loops of the crate itself (run the release build): write `count` messages on the
//!       stream key `bench` with `MessageSink`; replay a file to its end with `MessageSource`; follow
//!       a live file (`LiveReplay`) until `count` messages of `bench` arrived. Each prints one JSON
//!       line: `messages` and `seconds` (the tail from its first `bench` message to its last).
//!   ruststream-interop bench-produce <file> <count> <payload-bytes> [--burst N]
//!       The crate's producer as a user drives it (`FileStreamer`, `send` and its receipt): each
//!       receipt awaited before the next send, or N sends then their N receipts; same JSON line
//!       (see `bench_produce.rs`). <file> must not exist yet.
//!
//!   ruststream-interop fixtures <dir>
//!       Writes the test vectors multi-key.ss, beacons.ss and no-eos.ss into <dir>, the same bytes
//!       on every run (see `fixtures.rs`).
//!   ruststream-interop broker-write <file>
//!   ruststream-interop broker-read <file>
//!       RustStream's own file broker: a service publishing messages with headers, retrying one to
//!       its dead letter; and every message as that broker delivers it (see `broker.rs`).
//!   ruststream-interop same-but-clock <a> <b>
//!       Exit status 0 when the two files hold the same bytes but for timestamps: the same length,
//!       file name, interval and frames (stream key, shard, sequence, payload), in the same order.
//!
//!   ruststream-interop bench-redis-drain <url> <key> <group> <count> [--plain]
//!       A RustStream service draining a pre-filled Redis stream through its pipelined mount
//!       (`--plain`: without the window), each entry a JSON order decoded by serde; prints
//!       `messages`, `seconds`, `cpu_seconds` and `id_sum` (see `bench_redis.rs`).
//!
//!   ruststream-interop serve <config-json>
//!       A RustStream service on ruststream-fred (Redis streams, reliable lists, pub/sub),
//!       ruststream-sea-file (a stream file), ruststream-rdkafka (a Kafka topic) or
//!       ruststream-pulsar (a Shared subscription), driven by JSON lines on stdin and reporting on stdout
//!       (see `service.rs` and the README).
//!
//! u64 fields (shard, seq) are printed as decimal strings: JSON numbers lose precision past 2^53.

mod bench_produce;
mod bench_redis;
mod broker;
mod file_service;
mod fixtures;
mod kafka_service;
mod nats_service;
mod postgres_service;
mod pulsar_service;
mod rabbitmq_service;
mod redis_service;
mod service;

use base64::{engine::general_purpose::STANDARD, Engine};
use sea_streamer_file::{
    is_end_of_stream, FileErr, FileId, MessageSink, MessageSource, StreamMode,
    DEFAULT_BEACON_INTERVAL, DEFAULT_FILE_SIZE_LIMIT,
};
use sea_streamer_types::{
    Buffer, Message as _, MessageHeader, OwnedMessage, ShardId, StreamKey, Timestamp,
};
use serde_json::{json, Value};
use std::process::ExitCode;

fn millis(ts: &Timestamp) -> i64 {
    (ts.unix_timestamp_nanos() / 1_000_000) as i64
}

async fn decode(path: &str) -> Result<(), String> {
    let mut source = MessageSource::new(FileId::new(path), StreamMode::Replay)
        .await
        .map_err(|e| format!("open: {e:?}"))?;
    let header = source.file_header();
    println!(
        "{}",
        json!({
            "type": "header",
            "file_name": header.file_name,
            "created_at": millis(&header.created_at),
            "beacon_interval": header.beacon_interval,
        })
    );
    loop {
        let message = match source.next().await {
            Ok(m) => m,
            Err(FileErr::NotEnoughBytes) => {
                println!("{}", json!({ "type": "end", "reason": "eof", "offset": source.offset() }));
                return Ok(());
            }
            Err(e) => return Err(format!("at offset {}: {e:?}", source.offset())),
        };
        let shared = &message.message;
        let h = shared.header();
        println!(
            "{}",
            json!({
                "type": "message",
                "stream_key": h.stream_key().name(),
                "shard": h.shard_id().id().to_string(),
                "seq": h.sequence().to_string(),
                "timestamp": millis(h.timestamp()),
                "payload": STANDARD.encode(shared.message().into_bytes()),
            })
        );
        if is_end_of_stream(shared) {
            println!("{}", json!({ "type": "end", "reason": "eos", "offset": source.offset() }));
            return Ok(());
        }
    }
}

/// The frames of a file without their timestamps, for `same-but-clock`.
async fn frames_without_time(
    path: &str,
) -> Result<(String, u32, Vec<(String, u64, u64, Vec<u8>)>), String> {
    let mut source = MessageSource::new(FileId::new(path), StreamMode::Replay)
        .await
        .map_err(|e| format!("{path}: {e:?}"))?;
    let header = source.file_header();
    let (name, interval) = (header.file_name.clone(), header.beacon_interval);
    let mut frames = Vec::new();
    loop {
        match source.next().await {
            Ok(m) => {
                let h = m.message.header();
                frames.push((
                    h.stream_key().name().to_owned(),
                    h.shard_id().id(),
                    *h.sequence(),
                    m.message.message().into_bytes(),
                ));
            }
            Err(FileErr::NotEnoughBytes) => return Ok((name, interval, frames)),
            Err(e) => return Err(format!("{path} at offset {}: {e:?}", source.offset())),
        }
    }
}

async fn same_but_clock(a: &str, b: &str) -> Result<bool, String> {
    let size = |p: &str| std::fs::metadata(p).map(|m| m.len()).map_err(|e| format!("{p}: {e}"));
    Ok(size(a)? == size(b)? && frames_without_time(a).await? == frames_without_time(b).await?)
}

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a Value, String> {
    v.get(name).ok_or_else(|| format!("missing field `{name}` in {v}"))
}

fn u64_field(v: &Value, name: &str) -> Result<u64, String> {
    let f = field(v, name)?;
    match f {
        Value::String(s) => s.parse().map_err(|e| format!("`{name}`: {e}")),
        Value::Number(n) => n.as_u64().ok_or_else(|| format!("`{name}` is not a u64")),
        _ => Err(format!("`{name}` must be a string or number")),
    }
}

async fn write(path: &str, lines_path: &str, interval: u32, eos: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(lines_path).map_err(|e| format!("{lines_path}: {e}"))?;
    let mut sink = MessageSink::new(FileId::new(path), interval, DEFAULT_FILE_SIZE_LIMIT)
        .await
        .map_err(|e| format!("create: {e:?}"))?;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
        if v.get("type").and_then(Value::as_str).is_some_and(|t| t != "message") {
            continue;
        }
        let key = field(&v, "stream_key")?.as_str().ok_or("`stream_key` must be a string")?;
        let ms = u64_field(&v, "timestamp")?;
        let payload = STANDARD
            .decode(field(&v, "payload")?.as_str().ok_or("`payload` must be base64")?)
            .map_err(|e| format!("payload: {e}"))?;
        let ts = Timestamp::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
            .map_err(|e| format!("timestamp: {e}"))?;
        let header = MessageHeader::new(
            StreamKey::new(key).map_err(|e| format!("stream key: {e:?}"))?,
            ShardId::new(u64_field(&v, "shard")?),
            u64_field(&v, "seq")?,
            ts,
        );
        sink.write(OwnedMessage::new(header, payload)).map_err(|e| format!("write: {e:?}"))?;
    }
    sink.end(eos).await.map_err(|e| format!("end: {e:?}"))
}

const BENCH_KEY: &str = "bench";

fn report(messages: u64, started: std::time::Instant) {
    let seconds = started.elapsed().as_secs_f64();
    println!("{}", json!({ "messages": messages, "seconds": seconds }));
}

async fn bench_write(path: &str, count: u64, size: usize, append: bool) -> Result<(), String> {
    let file = FileId::new(path);
    let mut sink = if append {
        MessageSink::append(file, DEFAULT_BEACON_INTERVAL, DEFAULT_FILE_SIZE_LIMIT).await
    } else {
        MessageSink::new(file, DEFAULT_BEACON_INTERVAL, DEFAULT_FILE_SIZE_LIMIT).await
    }
    .map_err(|e| format!("open: {e:?}"))?;
    let key = StreamKey::new(BENCH_KEY).map_err(|e| format!("{e:?}"))?;
    let payload = vec![b'a'; size];
    let started = std::time::Instant::now();
    for seq in 1..=count {
        let header = MessageHeader::new(key.clone(), ShardId::new(0), seq, Timestamp::now_utc());
        sink.write(OwnedMessage::new(header, payload.clone())).map_err(|e| format!("write: {e:?}"))?;
    }
    sink.flush().await.map_err(|e| format!("flush: {e:?}"))?;
    report(count, started);
    sink.end(false).await.map_err(|e| format!("end: {e:?}"))
}

async fn bench_replay(path: &str) -> Result<(), String> {
    let started = std::time::Instant::now();
    let mut source = MessageSource::new(FileId::new(path), StreamMode::Replay)
        .await
        .map_err(|e| format!("open: {e:?}"))?;
    let mut count = 0u64;
    loop {
        match source.next().await {
            Ok(m) => {
                if is_end_of_stream(&m.message) {
                    break;
                }
                if m.message.header().stream_key().name() == BENCH_KEY {
                    count += 1;
                }
            }
            Err(FileErr::NotEnoughBytes) => break,
            Err(e) => return Err(format!("at offset {}: {e:?}", source.offset())),
        }
    }
    report(count, started);
    Ok(())
}

async fn bench_tail(path: &str, count: u64) -> Result<(), String> {
    let mut source = MessageSource::new(FileId::new(path), StreamMode::LiveReplay)
        .await
        .map_err(|e| format!("open: {e:?}"))?;
    eprintln!("ready");
    let mut seen = 0u64;
    let mut started = None;
    while seen < count {
        let m = source.next().await.map_err(|e| format!("at offset {}: {e:?}", source.offset()))?;
        if m.message.header().stream_key().name() == BENCH_KEY {
            started.get_or_insert_with(std::time::Instant::now);
            seen += 1;
        }
    }
    report(seen, started.unwrap_or_else(std::time::Instant::now));
    Ok(())
}

fn usage() -> ExitCode {
    eprintln!("usage: ruststream-interop decode <file>");
    eprintln!("       ruststream-interop write <file> <json-lines> [--interval BYTES] [--eos]");
    eprintln!("       ruststream-interop bench-write <file> <count> <payload-bytes> [--append]");
    eprintln!("       ruststream-interop bench-produce <file> <count> <payload-bytes> [--burst N]");
    eprintln!("       ruststream-interop bench-replay <file>");
    eprintln!("       ruststream-interop bench-tail <file> <count>");
    eprintln!("       ruststream-interop fixtures <dir>");
    eprintln!("       ruststream-interop broker-write <file>");
    eprintln!("       ruststream-interop broker-read <file>");
    eprintln!("       ruststream-interop same-but-clock <a> <b>");
    eprintln!("       ruststream-interop bench-redis-drain <url> <key> <group> <count> [--plain]");
    eprintln!("       ruststream-interop serve <config-json>");
    ExitCode::from(64)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("decode") if args.len() == 2 => decode(&args[1]).await,
        Some("fixtures") if args.len() == 2 => fixtures::write_all(&args[1]).await,
        Some("broker-write") if args.len() == 2 => broker::write(&args[1]).await,
        Some("broker-read") if args.len() == 2 => broker::read(&args[1]).await,
        Some("serve") if args.len() == 2 => service::serve(&args[1]).await,
        Some("same-but-clock") if args.len() == 3 => match same_but_clock(&args[1], &args[2]).await {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Some("write") if args.len() >= 3 => {
            let mut interval = DEFAULT_BEACON_INTERVAL;
            let mut eos = false;
            let mut rest = args[3..].iter();
            while let Some(flag) = rest.next() {
                match flag.as_str() {
                    "--eos" => eos = true,
                    "--interval" => match rest.next().and_then(|v| v.parse().ok()) {
                        Some(v) => interval = v,
                        None => return usage(),
                    },
                    _ => return usage(),
                }
            }
            write(&args[1], &args[2], interval, eos).await
        }
        Some("bench-write") if args.len() >= 4 => match (args[2].parse(), args[3].parse()) {
            (Ok(count), Ok(size)) => {
                bench_write(&args[1], count, size, args.get(4).is_some_and(|a| a == "--append")).await
            }
            _ => return usage(),
        },
        Some("bench-produce") if args.len() == 4 || args.len() == 6 => {
            let burst = match args.get(4..).unwrap_or_default() {
                [] => Some(1),
                [flag, n] if flag == "--burst" => n.parse().ok().filter(|&n| n > 0),
                _ => None,
            };
            match (args[2].parse(), args[3].parse(), burst) {
                (Ok(count), Ok(size), Some(burst)) => {
                    bench_produce::run(&args[1], count, size, burst).await
                }
                _ => return usage(),
            }
        }
        Some("bench-redis-drain") if args.len() == 5 || args.len() == 6 => {
            let plain = match args.get(5).map(String::as_str) {
                None => false,
                Some("--plain") => true,
                Some(_) => return usage(),
            };
            match args[4].parse() {
                Ok(count) => {
                    bench_redis::drain_stream(&args[1], &args[2], &args[3], count, !plain).await
                }
                Err(_) => return usage(),
            }
        }
        Some("bench-replay") if args.len() == 2 => bench_replay(&args[1]).await,
        Some("bench-tail") if args.len() == 3 => match args[2].parse() {
            Ok(count) => bench_tail(&args[1], count).await,
            Err(_) => return usage(),
        },
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
