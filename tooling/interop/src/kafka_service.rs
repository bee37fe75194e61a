//! The Kafka half of `serve`: a RustStream app on `ruststream-rdkafka`'s `KafkaBroker`, consuming
//! one topic in one consumer group and publishing to any topic.
//!
//! The subscription is what a team would deploy beside a TypeScript service in one group:
//! `Commit::Tracked` (an ack moves the committed position, nothing handed out and unsettled is
//! committed) and `StartOffset::Earliest`, so a fresh group reads what was published before it
//! joined. Retries are the runtime's copies with `x-ruststream-retry-count` (Kafka counts no
//! deliveries), back to the topic itself, and a spent delivery goes to the dead letter as it
//! arrived.

use ruststream::prelude::*;
use ruststream_rdkafka::context::keys::Key;
use ruststream_rdkafka::context::KafkaContext;
use ruststream_rdkafka::{
    Commit, ConnectedKafkaBroker, KafkaBroker, KafkaPublish, KafkaTopic, StartOffset,
    PARTITION_KEY_HEADER,
};

use crate::service::{config, consume, handle, Outgoing, Payload, Service};

// The consumer's client id names the member (the config's `consumer`), so the group's
// description tells the Rust member from a TypeScript one.
#[subscriber(
    KafkaTopic::new(consume().key.clone())
        .group(consume().group.clone())
        .commit(Commit::Tracked)
        .start(StartOffset::Earliest)
        .config("client.id", consume().consumer.clone())
)]
async fn topic(payload: &Payload<'_>, ctx: &mut Context<'_, KafkaContext>) -> HandlerOutcome {
    // The record key is what the crate reports as the partition key on the wire (it mirrors it
    // into the kafka-partition-key header); the message's own `partition_key` is the lane key,
    // the partition number in decimal under the default `LaneKey::Partition`.
    let key = ctx.context(Key).map(<[u8]>::to_vec);
    handle("kafka", payload.0, ctx.headers(), key.as_deref(), None).await
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

pub struct KafkaService {
    running: RunningApp,
    publisher: <KafkaPublish as PublishPolicy<ConnectedKafkaBroker>>::Live,
}

pub async fn start() -> Result<KafkaService, String> {
    let cfg = config();
    let broker = KafkaBroker::new([cfg.url.clone()]).bindable();
    let egress = broker.bind(KafkaPublish::default());
    let app = RustStream::new(AppInfo::new("interop-rust", "0.1.0")).with_broker(broker, |b| {
        let Some(c) = cfg.consume.as_ref() else {
            return;
        };
        let cap = std::num::NonZeroU32::new(c.max_attempts).unwrap_or(std::num::NonZeroU32::MIN);
        b.include(topic)
            .max_attempts(cap)
            .dead_letter(c.dead_letter.clone());
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    Ok(KafkaService { running, publisher })
}

impl Service for KafkaService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        let mut headers = m.headers;
        // The crate's key: its header becomes the record's native key and is not sent as a
        // header of its own.
        if let Some(key) = m.partition_key {
            headers.insert(PARTITION_KEY_HEADER, key);
        }
        let raw = Raw(m.payload);
        self.publisher
            .message(&raw)
            .with_headers(headers)
            .to(m.key.as_str())
            .publish()
            .await
            .map_err(|e| format!("publish to {}: {e}", m.key))
    }

    async fn shutdown(self) -> Result<(), String> {
        self.running
            .shutdown()
            .await
            .map_err(|e| format!("shutdown: {e}"))
    }
}
