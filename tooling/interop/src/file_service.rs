//! The file half of `serve`: a RustStream app on `ruststream-sea-file`'s `FileBroker`, consuming one
//! stream key of a `.ss` file (from the live tail, replayed from the start, or resumed at a
//! sequence) and publishing to any key of it.
//!
//! The broker opens the file's writer when it connects, and sea-streamer-file knows no other
//! writer, so a test lets one process write to a file at a time.

use ruststream::otel::OpenTelemetry;
use ruststream::prelude::*;
use ruststream_sea_file::file::prelude::*;
use ruststream_sea_file::FilePublisher;
use serde::Serialize;

use crate::service::{config, consume, handle, Outgoing, Payload, Service};

/// Replays the key when the configuration says so; a method, so the `#[subscriber]` attribute
/// still reads the descriptor's type off the chain.
trait ReplayFromConfig {
    fn replay_from_config(self) -> Self;
}

impl ReplayFromConfig for FileStream {
    fn replay_from_config(self) -> Self {
        if consume().replay {
            self.replay()
        } else {
            self
        }
    }
}

// The crate's deliveries report no partition key (`SeaMessage` leaves `partition_key` at the
// trait's `None`), whatever the headers say.
#[subscriber(FileStream::new(consume().key.clone()).replay_from_config())]
async fn stream_key(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    handle("file", payload.0, ctx.headers(), None, None).await
}

#[subscriber(
    FileStream::new(consume().key.clone()).replay_from_config(),
    start_at(FilePosition::sequence(consume().start_at.unwrap_or(1)))
)]
async fn stream_key_from(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    handle("file", payload.0, ctx.headers(), None, None).await
}

/// Where the traced mount replies (`consume.otel_reply`).
fn otel_reply_key() -> &'static str {
    consume()
        .otel_reply
        .expect("the traced mount is chosen only with otel_reply")
}

/// The traced mount's reply, `{"echo": "<the payload, as UTF-8>"}` in the crate's JSON codec: an
/// encoded reply, not raw bytes, since RustStream's propagation transform composes onto an encoded
/// reply only (a `Serialized` one leaves with no transform stack).
#[derive(Serialize, Outgoing)]
struct Echo {
    echo: String,
}

/// The traced mount (`otel_reply`): the delivery is reported as every other is, with the headers
/// the handler sees, so with the `traceparent` RustStream's consume layer stamped there (the
/// context of its span for this delivery), then answered with its payload, which the propagation
/// transform sends on with that context.
#[subscriber(FileStream::new(consume().key.clone()), reply(otel_reply_key()))]
async fn traced(payload: &Payload<'_>, ctx: &mut Context<'_>) -> Echo {
    let _ = handle("file", payload.0, ctx.headers(), None, None).await;
    Echo {
        echo: String::from_utf8_lossy(payload.0).into_owned(),
    }
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

pub struct FileService {
    running: RunningApp,
    publisher: FilePublisher,
}

pub async fn start() -> Result<FileService, String> {
    let cfg = config();
    let broker = FileBroker::new(cfg.path.clone()).bindable();
    let egress = broker.bind(Publish);
    let info = AppInfo::new("interop-rust", "0.1.0");
    let traced_mount = cfg.consume.as_ref().is_some_and(|c| c.otel_reply.is_some());
    // Two apps rather than one: a global layer changes the app's type, and the untraced services
    // must see their deliveries' headers as they arrived.
    let running = if traced_mount {
        let otel = OpenTelemetry::new();
        RustStream::new(info)
            .layer(otel.consume_layer())
            .with_broker(broker, |b| {
                b.include(traced)
                    .out_reply(Publish)
                    .transform(otel.propagation());
            })
            .start()
            .await
    } else {
        RustStream::new(info)
            .with_broker(broker, |b| {
                let Some(c) = cfg.consume.as_ref() else {
                    return;
                };
                let cap =
                    std::num::NonZeroU32::new(c.max_attempts).unwrap_or(std::num::NonZeroU32::MIN);
                let dead = c.dead_letter.clone();
                if c.start_at.is_some() {
                    b.include(stream_key_from)
                        .max_attempts(cap)
                        .dead_letter(dead);
                } else {
                    b.include(stream_key).max_attempts(cap).dead_letter(dead);
                }
            })
            .start()
            .await
    }
    .map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    Ok(FileService { running, publisher })
}

impl Service for FileService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        if m.partition_key.is_some() {
            return Err(
                "RustStream's file broker has no partition key: send the partition-key header"
                    .into(),
            );
        }
        let raw = Raw(m.payload);
        let publish = self.publisher.message(&raw);
        let sent = if m.headers.is_empty() {
            publish.to(m.key.as_str()).publish().await
        } else {
            publish
                .with_headers(m.headers)
                .to(m.key.as_str())
                .publish()
                .await
        };
        sent.map_err(|e| format!("publish to {}: {e}", m.key))
    }

    async fn shutdown(self) -> Result<(), String> {
        self.running
            .shutdown()
            .await
            .map_err(|e| format!("shutdown: {e}"))
    }
}
