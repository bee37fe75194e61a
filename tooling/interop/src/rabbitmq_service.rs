//! The RabbitMQ half of `serve`: a RustStream app on `ruststream-lapin`'s `LapinBroker`, consuming
//! one classic or quorum queue (declared by the crate: `declare_topology(true)`) and publishing to
//! any queue through the default exchange.
//!
//! On a quorum queue the server counts deliveries: `retry()` is a `basic.reject` with requeue,
//! and `max_attempts` + `dead_letter` become the queue's `x-delivery-limit` (`max_attempts - 1`)
//! and a dead-letter route through the default exchange, so the server moves a spent message
//! itself. On a classic queue the runtime counts with `x-ruststream-retry-count` copies; with
//! `delay`, a `retry_after` goes through the crate's TTL waiting queue `<key>.retry` (a copy
//! carrying the count raised by one, its `expiration` the delay, dead-lettered back). Requests
//! go over direct reply-to (the crate's `LapinRequest`); with `reply`, the handler answers a
//! request on the address its `reply-to` names, with its `correlation-id`, as any AMQP responder
//! does.

use std::sync::OnceLock;
use std::time::Duration;

use ruststream::{HeaderMap, IncomingMessage as _, OutgoingMessage, RequestReply as _};
use ruststream_lapin::prelude::*;
use ruststream_lapin::{
    ConnectedLapinBroker, LapinPublish, LapinRequest, RabbitQuorumQueue, PARTITION_KEY_HEADER,
};

use crate::service::{answer, config, consume, handle, Outgoing, Payload, Reply, Service};

type Live = <LapinPublish as PublishPolicy<ConnectedLapinBroker>>::Live;
type Requester = <LapinRequest as PublishPolicy<ConnectedLapinBroker>>::Live;

/// The service's publisher, for the handler's answers (set once the app runs, before `ready`).
static PUBLISHER: OnceLock<Live> = OnceLock::new();

// The crate hands the runtime a quorum queue's `x-delivery-count` as the redelivery count, but
// keeps that numeric header out of the handler's map (it carries string and byte values only), so
// the reported `attempt` is the retry-count header's on both queue types.
#[subscriber(RabbitQueue::new(consume().key.clone()))]
async fn classic(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    delivered("rabbitmq", payload.0, ctx.headers()).await
}

// With `delay`: a `retry_after` goes through the crate's TTL waiting queue `<key>.retry`, which
// the crate declares (the descriptor takes no condition, so it is a subscriber of its own).
#[subscriber(RabbitQueue::new(consume().key.clone()).delay(Delay::dlx_ttl()))]
async fn classic_delayed(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    delivered("rabbitmq", payload.0, ctx.headers()).await
}

#[subscriber(RabbitQuorumQueue::new(consume().key.clone()))]
async fn quorum(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    delivered("rabbitmq-quorum", payload.0, ctx.headers()).await
}

async fn delivered(via: &str, payload: &[u8], headers: &HeaderMap) -> HandlerOutcome {
    let outcome = handle(
        via,
        payload,
        headers,
        headers.get(PARTITION_KEY_HEADER),
        None,
    )
    .await;
    respond(payload, headers).await;
    outcome
}

/// Answers a request on its reply-to address when the service is a responder.
async fn respond(payload: &[u8], headers: &HeaderMap) {
    let (Some(address), true) = (headers.reply_to(), consume().reply) else {
        return;
    };
    let Some(publisher) = PUBLISHER.get() else {
        return;
    };
    let mut reply = HeaderMap::new();
    if let Some(id) = headers.get("correlation-id") {
        reply.insert("correlation-id", id.to_vec());
    }
    let body = Raw(answer(payload));
    if let Err(e) = publisher
        .message(&body)
        .with_headers(reply)
        .to(address)
        .publish()
        .await
    {
        eprintln!("answer to {address}: {e}");
    }
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

pub struct RabbitMqService {
    running: RunningApp,
    requester: Requester,
}

pub async fn start() -> Result<RabbitMqService, String> {
    let cfg = config();
    let mut broker = LapinBroker::new(cfg.url.clone()).declare_topology(true);
    if let Some(prefetch) = cfg.consume.as_ref().and_then(|c| c.prefetch) {
        broker = broker.prefetch(prefetch);
    }
    let broker = broker.bindable();
    let egress = broker.bind(LapinPublish::default());
    let asking = broker.bind(LapinRequest::default());
    let app = RustStream::new(AppInfo::new("interop-rust", "0.1.0")).with_broker(broker, |b| {
        let Some(c) = cfg.consume.as_ref() else {
            return;
        };
        // `max_attempts: 0`: mounted without the pair, so the crate declares a quorum queue with
        // no delivery limit (as a queue another service made is read).
        let cap = std::num::NonZeroU32::new(c.max_attempts);
        macro_rules! mount {
            ($subscriber:ident) => {
                match cap {
                    None => {
                        b.include($subscriber);
                    }
                    Some(cap) => {
                        b.include($subscriber)
                            .max_attempts(cap)
                            .dead_letter(c.dead_letter.clone());
                    }
                }
            };
        }
        match (c.quorum, c.delay) {
            (true, false) => mount!(quorum),
            (false, false) => mount!(classic),
            (false, true) => mount!(classic_delayed),
            (true, true) => unreachable!("refused by the configuration"),
        }
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let publisher = running
        .publisher(egress)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    let requester = running
        .publisher(asking)
        .await
        .map_err(|e| format!("requester: {e}"))?;
    let _ = PUBLISHER.set(publisher);
    Ok(RabbitMqService { running, requester })
}

/// The message's headers, with the partition key as the crate's header (AMQP has no key of its
/// own: the crate reads the lane key from this header).
fn headers_of(m: &Outgoing) -> HeaderMap {
    let mut headers = m.headers.clone();
    if let Some(key) = &m.partition_key {
        headers.insert(PARTITION_KEY_HEADER, key.clone());
    }
    headers
}

impl Service for RabbitMqService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        let headers = headers_of(&m);
        let raw = Raw(m.payload);
        PUBLISHER
            .get()
            .ok_or("the publisher is set before ready")?
            .message(&raw)
            .with_headers(headers)
            .to(m.key.as_str())
            .publish()
            .await
            .map_err(|e| format!("publish to {}: {e}", m.key))
    }

    async fn request(&self, m: Outgoing, timeout: Duration) -> Result<Reply, String> {
        let headers = headers_of(&m);
        let message =
            OutgoingMessage::new(m.key.as_str(), m.payload.as_slice()).with_headers(headers);
        let reply = self
            .requester
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
