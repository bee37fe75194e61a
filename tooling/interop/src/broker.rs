//! RustStream's own file broker (`ruststream-sea-file`) on both ends of a stream file, for the
//! fixture that pins the `rs1:`/`rs2:` header envelopes `@ruststream/file` reads.
//!
//! `write` runs a small RustStream service the way one is deployed: a `FileBroker` registered on
//! an app, messages published through the app's publisher, and a handler that always asks for a
//! retry, so the runtime itself appends the retry copies and, at the cap, the dead letter. `read`
//! prints every message as that broker delivers it to a handler.

use futures::StreamExt as _;
use ruststream::{ConnectedBroker as _, IncomingMessage as _, Subscriber as _};
use ruststream_sea_file::file::prelude::*;
use sea_streamer_file::{FileErr, FileId, MessageSource, StreamMode};
use sea_streamer_types::SEA_STREAMER_INTERNAL;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::Notify;

use base64::{engine::general_purpose::STANDARD, Engine};

/// The stream key RustStream primes a fresh file on; no service reads it.
const PRIME_STREAM: &str = "ruststream-internal";

/// Told once the dead letter has come back through the file, which is the last write before the
/// end-of-stream frame.
static SPENT: Notify = Notify::const_new();

/// A delivery's bytes as they arrived: no codec anywhere on the path.
#[derive(Deserialized)]
struct Frame<'a>(#[allow(dead_code)] &'a [u8]);

/// Bytes published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

#[subscriber(FileStream::new("jobs"))]
async fn work(_job: &Frame<'_>) -> HandlerOutcome {
    HandlerOutcome::retry()
}

#[subscriber(FileStream::new("jobs.dead"))]
async fn spent(_job: &Frame<'_>) -> HandlerOutcome {
    SPENT.notify_one();
    HandlerOutcome::ack()
}

fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(name.to_string(), value.to_vec());
    }
    map
}

/// What the service publishes, in order: (stream key, payload, headers). Each message pins one
/// rule of the envelope; the comments say which.
fn publications() -> Vec<(&'static str, Vec<u8>, HeaderMap)> {
    vec![
        // Headers a line carries: `rs1:`.
        (
            "orders",
            br#"{"order":1,"sku":"A-1"}"#.to_vec(),
            headers(&[
                ("content-type", b"application/json"),
                ("partition-key", b"A-1"),
                ("correlation-id", b"6f1c2a90-order-1"),
                ("message-id", b"m-1"),
                ("reply-to", b"receipts"),
            ]),
        ),
        // Names are stored lowercase; a value may hold colons, spaces inside, nothing, or
        // non-ASCII text, and still be a line.
        (
            "orders",
            br#"{"order":2,"sku":"B-2"}"#.to_vec(),
            headers(&[
                ("X-Tenant-Id", b"acme"),
                ("x-url", b"http://example.com:8080/a b"),
                ("x-colon-space", b"key: value"),
                ("x-empty", b""),
                ("x-unicode", "naïve ☕ ü".as_bytes()),
                ("partition-key", b"B-2"),
            ]),
        ),
        // A binary value (and a binary partition key, and a binary payload): `rs2:`.
        (
            "events",
            (0..=255u8).collect(),
            headers(&[
                ("content-type", b"application/octet-stream"),
                ("x-binary", &[0x00, 0x80, b'\r', b'\n', 0xfe, 0xff, 0xc3]),
                ("partition-key", &[0xff, 0x00, 0x41]),
            ]),
        ),
        // Values a line would cut or trim, and a name holding a colon: `rs2:`.
        (
            "events",
            b"text payload".to_vec(),
            headers(&[
                ("x-padded", b" padded\t"),
                ("x-multi-line", b"first\nsecond"),
                ("x-carriage-return", b"value\r"),
                ("x-name:colon", b"value"),
                ("x-plain", b"plain"),
            ]),
        ),
        // U+0085 (NEXT LINE) is whitespace to Rust's `trim`, so a value ending with it is `rs2:`.
        (
            "events",
            b"nel".to_vec(),
            headers(&[("x-next-line", "ends with NEL\u{85}".as_bytes())]),
        ),
        // U+FEFF is not whitespace to Rust's `trim`, so a value starting with it stays a line.
        (
            "events",
            b"bom".to_vec(),
            headers(&[("x-bom", "\u{feff}starts with BOM".as_bytes())]),
        ),
        // No headers: written as it is, text or binary.
        ("raw", b"plain text payload".to_vec(), HeaderMap::new()),
        ("raw", vec![0x00, 0x9f, 0x92, 0x96, 0xff], HeaderMap::new()),
        // No headers, but it begins like an envelope: enveloped with an empty header block.
        ("raw", b"rs1:AAAAAA==".to_vec(), HeaderMap::new()),
        ("raw", b"rs2:AAAAAA==".to_vec(), HeaderMap::new()),
        // Headers and an empty payload.
        ("raw", Vec::new(), headers(&[("x-empty-payload", b"yes")])),
        // An envelope longer than the beacon interval, split by beacons.
        (
            "big",
            b"0123456789abcdef"
                .iter()
                .copied()
                .cycle()
                .take(1500)
                .collect(),
            headers(&[("content-type", b"text/plain"), ("partition-key", b"big-1")]),
        ),
        // A header with an empty name, which RustStream's map accepts.
        (
            "edge",
            b"nameless".to_vec(),
            headers(&[("", b"no name"), ("x-after", b"kept")]),
        ),
    ]
}

/// Writes the fixture at `path` (which must not exist) through a RustStream service.
pub async fn write(path: &str) -> Result<(), String> {
    if std::path::Path::new(path).exists() {
        return Err(format!(
            "{path} exists: the broker appends to a file it finds"
        ));
    }
    let broker = FileBroker::new(path)
        .beacon_interval(1024)
        .end_with_eos()
        .bindable();
    let egress = broker.bind(Publish);
    let app = RustStream::new(AppInfo::new("interop-fixture", "0.1.0")).with_broker(broker, |b| {
        b.include(work)
            .max_attempts(nonzero!(3u32))
            .dead_letter("jobs.dead");
        b.include(spent);
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    for (key, payload, headers) in publications() {
        let raw = Raw(payload);
        let publish = publisher.message(&raw);
        let sent = if headers.is_empty() {
            publish.to(key).publish().await
        } else {
            publish.with_headers(headers).to(key).publish().await
        };
        sent.map_err(|e| format!("publish to {key}: {e}"))?;
    }
    // Last, so the copies the runtime appends for it follow everything above in the file.
    let job = headers(&[
        ("content-type", b"application/json"),
        ("partition-key", b"job-7"),
        ("x-tenant-id", b"acme"),
    ]);
    publisher
        .message(&Raw(br#"{"job":7}"#.to_vec()))
        .with_headers(job)
        .to("jobs")
        .publish()
        .await
        .map_err(|e| format!("publish to jobs: {e}"))?;
    tokio::time::timeout(Duration::from_secs(30), SPENT.notified())
        .await
        .map_err(|_| "the dead letter did not come back within 30 s".to_owned())?;
    running
        .shutdown()
        .await
        .map_err(|e| format!("shutdown: {e}"))
}

/// The stream keys of the file in order of first appearance, internal ones left out.
async fn stream_keys(path: &str) -> Result<Vec<String>, String> {
    let mut source = MessageSource::new(FileId::new(path), StreamMode::Replay)
        .await
        .map_err(|e| format!("open: {e:?}"))?;
    let mut keys: Vec<String> = Vec::new();
    loop {
        match source.next().await {
            Ok(m) => {
                let key = m.message.header().stream_key().name().to_owned();
                if key != SEA_STREAMER_INTERNAL && key != PRIME_STREAM && !keys.contains(&key) {
                    keys.push(key);
                }
            }
            Err(FileErr::NotEnoughBytes) => return Ok(keys),
            Err(e) => return Err(format!("at offset {}: {e:?}", source.offset())),
        }
    }
}

fn b64(bytes: &[u8]) -> Value {
    Value::String(STANDARD.encode(bytes))
}

/// Prints, one JSON line each, every message of every stream key as the broker delivers it to a
/// handler: payload, headers in the map's order (values base64), partition key, redelivery count.
pub async fn read(path: &str) -> Result<(), String> {
    // The broker opens a writer on connect; it reads a copy so the fixture is never touched.
    let copy =
        std::env::temp_dir().join(format!("ruststream-interop-read-{}.ss", std::process::id()));
    std::fs::copy(path, &copy).map_err(|e| format!("{path}: {e}"))?;
    let copy = copy.to_string_lossy().into_owned();
    let result = read_copy(&copy).await;
    let _ = std::fs::remove_file(&copy);
    result
}

async fn read_copy(path: &str) -> Result<(), String> {
    let keys = stream_keys(path).await?;
    let connected = FileBroker::new(path)
        .existing_only()
        .connect()
        .await
        .map_err(|e| format!("connect: {e}"))?;
    for key in keys {
        let mut subscriber = connected
            .subscribe_stream(FileStream::new(key.clone()).replay())
            .await
            .map_err(|e| format!("subscribe {key}: {e}"))?;
        let mut deliveries = subscriber.stream();
        while let Some(delivery) = deliveries.next().await {
            let m = delivery.map_err(|e| format!("{key}: {e}"))?;
            let headers: Vec<Value> = m
                .headers()
                .iter()
                .map(|(n, v)| json!([n, b64(v)]))
                .collect();
            println!(
                "{}",
                json!({
                    "stream": key,
                    "payload": b64(m.payload()),
                    "headers": headers,
                    "partition_key": m.partition_key().map(b64),
                    "redelivery_count": m.redelivery_count(),
                })
            );
        }
    }
    connected
        .shutdown()
        .await
        .map_err(|e| format!("shutdown: {e}"))
}
