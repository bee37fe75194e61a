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
//! u64 fields (shard, seq) are printed as decimal strings: JSON numbers lose precision past 2^53.

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

fn usage() -> ExitCode {
    eprintln!("usage: ruststream-interop decode <file>");
    eprintln!("       ruststream-interop write <file> <json-lines> [--interval BYTES] [--eos]");
    ExitCode::from(64)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("decode") if args.len() == 2 => decode(&args[1]).await,
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
