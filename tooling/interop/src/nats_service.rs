//! The NATS half of `serve`: a RustStream app on `ruststream-nats`'s `NatsBroker`, consuming one
//! core subject (alone, or in a queue group), or one subject of a JetStream stream through a
//! durable pull consumer (which other processes of the same name share), and
//! publishing on core NATS (a subject a stream stores is stored by the stream).
//!
//! Core NATS settles nothing: a retry is the runtime's copy back to the subject, carrying
//! `x-ruststream-retry-count`. JetStream counts deliveries itself: `retry()` is a `-NAK` and the
//! attempt is the server's delivery count. On both, a delivery past `max_attempts` goes to the
//! dead letter as the crate writes it (payload and headers as they arrived). With `reply`, the
//! handler answers a request on the inbox its `reply-to` names, as the crate's own responder
//! example does.

use std::sync::OnceLock;
use std::time::Duration;

use ruststream::{IncomingMessage as _, OutgoingMessage, RequestReply as _};
use ruststream_nats::context::keys::DELIVERED;
use ruststream_nats::context::JetStreamContext;
use ruststream_nats::prelude::*;
use ruststream_nats::{ConnectedNatsBroker, NatsPublish, PARTITION_KEY_HEADER};

use crate::service::{answer, config, consume, handle, Outgoing, Payload, Reply, Service};

type Live = <NatsPublish as PublishPolicy<ConnectedNatsBroker>>::Live;

/// The service's publisher, for the handler's answers (set once the app runs, before `ready`).
static PUBLISHER: OnceLock<Live> = OnceLock::new();

#[subscriber(CoreSubject::new(consume().key.clone()))]
async fn core(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    on_core(payload.0, ctx.headers()).await
}

/// The same subject in the queue group `group`: the macro takes a constructor and its settings,
/// so the group is a subscriber of its own rather than a setting chosen at run time.
#[subscriber(CoreSubject::new(consume().key.clone()).queue_group(consume().group.clone()))]
async fn core_queue(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    on_core(payload.0, ctx.headers()).await
}

/// A core delivery, alone or in the group: reported, answered as the test asked, replied to.
async fn on_core(payload: &[u8], headers: &ruststream::HeaderMap) -> HandlerOutcome {
    let outcome = handle(
        "nats",
        payload,
        headers,
        headers.get(PARTITION_KEY_HEADER),
        None,
    )
    .await;
    respond(payload, headers.reply_to()).await;
    outcome
}

#[subscriber(
    JetStreamSubject::new(
        consume().key.clone(),
        consume().stream.clone().unwrap_or_default(),
    )
    .durable(consume().group.clone())
)]
async fn jetstream(
    payload: &Payload<'_>,
    ctx: &mut Context<'_, JetStreamContext>,
) -> HandlerOutcome {
    // The server's delivery count, which the runtime caps on (the crate hands it over).
    let delivered = ctx.context(DELIVERED).and_then(|n| u64::try_from(n).ok());
    let headers = ctx.headers();
    handle(
        "jetstream",
        payload.0,
        headers,
        headers.get(PARTITION_KEY_HEADER),
        delivered,
    )
    .await
}

/// Answers a request on its inbox when the service is a responder.
async fn respond(payload: &[u8], reply_to: Option<&str>) {
    let (Some(inbox), true) = (reply_to, consume().reply) else {
        return;
    };
    let Some(publisher) = PUBLISHER.get() else {
        return;
    };
    let body = Raw(answer(payload));
    if let Err(e) = publisher.message(&body).to(inbox).publish().await {
        eprintln!("answer to {inbox}: {e}");
    }
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

pub struct NatsService {
    running: RunningApp,
}

pub async fn start() -> Result<NatsService, String> {
    let cfg = config();
    let broker = NatsBroker::new(cfg.url.clone()).bindable();
    let egress = broker.bind(NatsPublish);
    let app = RustStream::new(AppInfo::new("interop-rust", "0.1.0")).with_broker(broker, |b| {
        let Some(c) = cfg.consume.as_ref() else {
            return;
        };
        let cap = std::num::NonZeroU32::new(c.max_attempts).unwrap_or(std::num::NonZeroU32::MIN);
        if c.stream.is_some() {
            b.include(jetstream)
                .max_attempts(cap)
                .dead_letter(c.dead_letter.clone());
        } else if c.queue {
            b.include(core_queue)
                .max_attempts(cap)
                .dead_letter(c.dead_letter.clone());
        } else {
            b.include(core)
                .max_attempts(cap)
                .dead_letter(c.dead_letter.clone());
        }
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    let _ = PUBLISHER.set(publisher);
    Ok(NatsService { running })
}

fn publisher() -> Result<&'static Live, String> {
    PUBLISHER
        .get()
        .ok_or_else(|| "the publisher is set before ready".to_owned())
}

/// The message's headers, with the partition key as the crate's header (NATS has no key of its
/// own: the crate reads the lane key from this header).
fn headers_of(m: &Outgoing) -> Result<ruststream::HeaderMap, String> {
    let mut headers = m.headers.clone();
    if let Some(key) = &m.partition_key {
        std::str::from_utf8(key).map_err(|_| {
            "a NATS partition key is text: the crate sends it as a header".to_owned()
        })?;
        headers.insert(PARTITION_KEY_HEADER, key.clone());
    }
    Ok(headers)
}

impl Service for NatsService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        let headers = headers_of(&m)?;
        let raw = Raw(m.payload);
        publisher()?
            .message(&raw)
            .with_headers(headers)
            .to(m.key.as_str())
            .publish()
            .await
            .map_err(|e| format!("publish to {}: {e}", m.key))
    }

    async fn request(&self, m: Outgoing, timeout: Duration) -> Result<Reply, String> {
        let headers = headers_of(&m)?;
        let message =
            OutgoingMessage::new(m.key.as_str(), m.payload.as_slice()).with_headers(headers);
        let reply = publisher()?
            .request(message, timeout)
            .await
            .map_err(|e| format!("request to {}: {e}", m.key))?;
        Ok(Reply {
            payload: reply.payload().to_vec(),
            headers: reply.headers().clone(),
        })
    }

    async fn shutdown(self) -> Result<(), String> {
        self.running
            .shutdown()
            .await
            .map_err(|e| format!("shutdown: {e}"))
    }
}
