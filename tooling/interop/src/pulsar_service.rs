//! The Pulsar half of `serve`: a RustStream app on `ruststream-pulsar`'s `PulsarBroker`, consuming
//! one topic through a Shared subscription and publishing to any topic.
//!
//! Pulsar moves a retried message itself: `retry()` is a negative acknowledgement the broker
//! redelivers (to any consumer of the subscription) and counts, and `max_attempts` +
//! `dead_letter` become the client's own dead-letter policy, which moves a message the broker
//! redelivered that many times to the dead-letter topic (with Pulsar's `REAL_TOPIC` and
//! `ORIGIN_MESSAGE_ID` properties) instead of handing it to the handler.

use ruststream::prelude::*;
use ruststream_pulsar::{
    ConnectedPulsarBroker, PulsarBroker, PulsarPublish, PulsarPublishSteps as _,
    PulsarSubscription, SubscriptionType, PARTITION_KEY_HEADER,
};

use crate::service::{config, consume, handle, Outgoing, Payload, Service};

#[subscriber(
    PulsarSubscription::new(consume().key.clone(), consume().group.clone())
        .subscription_type(SubscriptionType::Shared)
)]
async fn shared(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    // The crate reports the message's partition key as the partition-key header (its
    // `partition_key()` reads the same header).
    let headers = ctx.headers();
    handle(
        "pulsar",
        payload.0,
        headers,
        headers.get(PARTITION_KEY_HEADER),
        None,
    )
    .await
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

pub struct PulsarService {
    running: RunningApp,
    publisher: <PulsarPublish as PublishPolicy<ConnectedPulsarBroker>>::Live,
}

pub async fn start() -> Result<PulsarService, String> {
    let cfg = config();
    let broker = PulsarBroker::new(cfg.url.clone()).bindable();
    let egress = broker.bind(PulsarPublish);
    let app = RustStream::new(AppInfo::new("interop-rust", "0.1.0")).with_broker(broker, |b| {
        let Some(c) = cfg.consume.as_ref() else {
            return;
        };
        let cap = std::num::NonZeroU32::new(c.max_attempts).unwrap_or(std::num::NonZeroU32::MIN);
        b.include(shared)
            .max_attempts(cap)
            .dead_letter(c.dead_letter.clone());
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    Ok(PulsarService { running, publisher })
}

impl Service for PulsarService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        let raw = Raw(m.payload);
        let builder = self
            .publisher
            .message(&raw)
            .with_headers(m.headers)
            .to(m.key.as_str());
        // The crate's own step: the key becomes the message's partition key, not a property.
        let sent = match m.partition_key {
            Some(key) => {
                let key = String::from_utf8(key).map_err(|_| {
                    "a Pulsar partition key is text: RustStream's step takes a String".to_owned()
                })?;
                builder.partition_key(key).publish().await
            }
            None => builder.publish().await,
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
