//! The test vectors of `packages/file/test/fixtures/` that `sea-streamer-file` writes itself:
//! `multi-key.ss`, `beacons.ss` and `no-eos.ss`.
//!
//! They are written to be reproducible byte for byte. The crate's `MessageSink` takes message
//! timestamps from the caller but stamps two things from the clock: the header's `created_at`
//! (in `MessageSink::new`) and the end-of-stream frame (in `end(true)`). So the header is the
//! crate's own `Header` written with a fixed `created_at`, `MessageSink::append` carries on after
//! it, and the end-of-stream frame is the crate's `end_of_stream()` message with a fixed time,
//! written like any other frame. `check_like_a_fresh_sink` proves, every time, that this writes
//! what `MessageSink::new` + `end(eos)` would have written but for those clock fields.

use sea_streamer_file::format::Header;
use sea_streamer_file::{
    end_of_stream, is_end_of_stream, ByteBuffer, Bytes, FileErr, FileId, MessageSink,
    MessageSource, StreamMode, DEFAULT_BEACON_INTERVAL, DEFAULT_FILE_SIZE_LIMIT,
};
use sea_streamer_types::{
    Buffer, Message as _, MessageHeader, OwnedMessage, ShardId, StreamKey, Timestamp,
};
use std::path::Path;

struct Fixture {
    file_name: &'static str,
    beacon_interval: u32,
    created_at: u64,
    messages: Vec<(&'static str, u64, u64, u64, Vec<u8>)>,
    /// The end-of-stream frame's time, when the file ends with one.
    eos_at: Option<u64>,
}

fn at(ms: u64) -> Result<Timestamp, String> {
    Timestamp::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).map_err(|e| e.to_string())
}

fn message(
    key: &str,
    shard: u64,
    seq: u64,
    ms: u64,
    payload: Vec<u8>,
) -> Result<OwnedMessage, String> {
    let key = StreamKey::new(key).map_err(|e| format!("stream key {key}: {e:?}"))?;
    Ok(OwnedMessage::new(
        MessageHeader::new(key, ShardId::new(shard), seq, at(ms)?),
        payload,
    ))
}

fn eos(ms: u64) -> Result<OwnedMessage, String> {
    let clocked = end_of_stream();
    let h = clocked.header();
    Ok(OwnedMessage::new(
        MessageHeader::new(
            h.stream_key().clone(),
            *h.shard_id(),
            *h.sequence(),
            at(ms)?,
        ),
        clocked.message().into_bytes(),
    ))
}

fn err(e: FileErr) -> String {
    format!("{e:?}")
}

/// Writes `f` at `path` with every field fixed: the same bytes on every run.
async fn write(f: &Fixture, path: &Path) -> Result<(), String> {
    let header = Header {
        file_name: f.file_name.to_owned(),
        created_at: at(f.created_at)?,
        beacon_interval: f.beacon_interval,
    };
    let mut buffer = ByteBuffer::new();
    header.write_to(&mut buffer).map_err(err)?;
    let size = buffer.size();
    let bytes: Bytes = buffer.consume(size);
    std::fs::write(path, bytes.bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    let id = FileId::new(path.to_string_lossy().into_owned());
    let mut sink = MessageSink::append(id, f.beacon_interval, DEFAULT_FILE_SIZE_LIMIT)
        .await
        .map_err(err)?;
    for (key, shard, seq, ms, payload) in &f.messages {
        sink.write(message(key, *shard, *seq, *ms, payload.clone())?)
            .map_err(err)?;
    }
    if let Some(ms) = f.eos_at {
        sink.write(eos(ms)?).map_err(err)?;
    }
    sink.end(false).await.map_err(err)
}

/// What the crate's fresh sink writes for the same messages, clock and all.
async fn write_fresh(f: &Fixture, path: &Path) -> Result<(), String> {
    let id = FileId::new(path.to_string_lossy().into_owned());
    let mut sink = MessageSink::new(id, f.beacon_interval, DEFAULT_FILE_SIZE_LIMIT)
        .await
        .map_err(err)?;
    for (key, shard, seq, ms, payload) in &f.messages {
        sink.write(message(key, *shard, *seq, *ms, payload.clone())?)
            .map_err(err)?;
    }
    sink.end(f.eos_at.is_some()).await.map_err(err)
}

type Frame = (String, u64, u64, u64, Vec<u8>);

async fn read(path: &Path) -> Result<(Header, Vec<Frame>), String> {
    let id = FileId::new(path.to_string_lossy().into_owned());
    let mut source = MessageSource::new(id, StreamMode::Replay)
        .await
        .map_err(err)?;
    let header = source.file_header().clone();
    let mut frames = Vec::new();
    loop {
        match source.next().await {
            Ok(m) => {
                let h = m.message.header();
                let ms = (h.timestamp().unix_timestamp_nanos() / 1_000_000) as u64;
                // The clock decides the end-of-stream frame's time in the fresh file.
                let ms = if is_end_of_stream(&m.message) { 0 } else { ms };
                frames.push((
                    h.stream_key().name().to_owned(),
                    h.shard_id().id(),
                    *h.sequence(),
                    ms,
                    m.message.message().into_bytes(),
                ));
            }
            Err(FileErr::NotEnoughBytes) => return Ok((header, frames)),
            Err(e) => return Err(format!("{}: {e:?}", path.display())),
        }
    }
}

/// Fails unless `written` holds what a fresh `MessageSink` writes for the same fixture, apart from
/// the header's `created_at` and the end-of-stream frame's time.
async fn check_like_a_fresh_sink(
    f: &Fixture,
    written: &Path,
    scratch: &Path,
) -> Result<(), String> {
    let fresh = scratch.join(f.file_name);
    write_fresh(f, &fresh).await?;
    let (a, b) = (
        std::fs::read(written).map_err(|e| e.to_string())?,
        std::fs::read(&fresh).map_err(|e| e.to_string())?,
    );
    let (ha, fa) = read(written).await?;
    let (hb, fb) = read(&fresh).await?;
    std::fs::remove_file(&fresh).map_err(|e| e.to_string())?;
    let same = a.len() == b.len()
        && ha.file_name == hb.file_name
        && ha.beacon_interval == hb.beacon_interval
        && fa == fb
        && a.iter().zip(&b).filter(|(x, y)| x != y).count() <= 16;
    if same {
        Ok(())
    } else {
        Err(format!(
            "{}: differs from what a fresh MessageSink writes beyond its clock fields",
            f.file_name
        ))
    }
}

/// Several stream keys, no beacon (1 MiB interval), an end-of-stream frame.
fn multi_key() -> Fixture {
    let created_at = 1_700_000_000_000;
    // Which key each message goes to: orders 10, payments 7, audit.log 5, Zeta 2.
    let plan = [
        0, 0, 1, 0, 2, 1, 0, 3, 0, 1, 2, 0, 1, 0, 2, 1, 0, 3, 1, 0, 2, 1, 0, 2,
    ];
    let keys = [
        ("orders", 0),
        ("payments", 0),
        ("audit.log", 2),
        ("Zeta", 0),
    ];
    let mut seqs = [0u64; 4];
    let mut messages = Vec::new();
    for (i, &k) in plan.iter().enumerate() {
        seqs[k] += 1;
        let n = seqs[k];
        let payload = match k {
            0 => format!(
                r#"{{"order":{n},"sku":"SKU-{:03}","qty":{}}}"#,
                n * 7,
                n % 4 + 1
            )
            .into_bytes(),
            1 => format!(
                r#"{{"payment":{n},"order":{},"amount_cents":{}}}"#,
                n + 1,
                1250 * n
            )
            .into_bytes(),
            2 => format!("audit {n}: order {} changed state", n * 2).into_bytes(),
            // An empty payload, then every byte value once, highest first.
            _ if n == 1 => Vec::new(),
            _ => (0..=255u8).rev().collect(),
        };
        let (key, shard) = keys[k];
        messages.push((key, shard, n, created_at + 1 + 5 * i as u64, payload));
    }
    Fixture {
        file_name: "multi-key.ss",
        beacon_interval: DEFAULT_BEACON_INTERVAL,
        created_at,
        messages,
        eos_at: Some(created_at + 200),
    }
}

/// 100 small frames at a 1024-byte beacon interval: beacons split frames, and the one marker a
/// beacon has room for rotates between the two streams.
fn beacons() -> Fixture {
    let created_at = 1_700_000_100_000;
    let mut messages = Vec::new();
    for i in 0..100u64 {
        let ms = created_at + 3 + 2 * i;
        if i % 10 == 9 {
            let n = i / 10 + 1;
            messages.push(("alarms", 0, n, ms, format!("alarm-{n}").into_bytes()));
        } else {
            let seq = i - i / 10;
            messages.push(("ticks", 1, seq, ms, format!("tick-{seq:02}").into_bytes()));
        }
    }
    Fixture {
        file_name: "beacons.ss",
        beacon_interval: 1024,
        created_at,
        messages,
        eos_at: Some(created_at + 300),
    }
}

/// One stream key, payloads of assorted sizes (one frame longer than two intervals), and no
/// end-of-stream frame: the file simply stops after its last complete frame.
fn no_eos() -> Fixture {
    let created_at = 1_700_000_200_000;
    let mut state: u32 = 0x2545_f491;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let mut messages = Vec::new();
    for seq in 1..=30u64 {
        let len = if seq == 17 {
            4200
        } else {
            20 + (next() % 150) as usize
        };
        let payload: Vec<u8> = (0..len).map(|_| (next() >> 24) as u8).collect();
        messages.push(("trace", 0, seq, created_at + 10 * seq, payload));
    }
    Fixture {
        file_name: "no-eos.ss",
        beacon_interval: 2048,
        created_at,
        messages,
        eos_at: None,
    }
}

/// Writes the three fixtures into `dir`, checking each against a fresh sink's output.
pub async fn write_all(dir: &str) -> Result<(), String> {
    let dir = Path::new(dir);
    let scratch = std::env::temp_dir().join(format!(
        "ruststream-interop-fixtures-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    for f in [multi_key(), beacons(), no_eos()] {
        let path = dir.join(f.file_name);
        write(&f, &path).await?;
        check_like_a_fresh_sink(&f, &path, &scratch).await?;
    }
    std::fs::remove_dir_all(&scratch).map_err(|e| e.to_string())
}
