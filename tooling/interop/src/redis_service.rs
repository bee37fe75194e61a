//! The Redis half of `serve`: a RustStream app on `ruststream-fred`, consuming one stream (with an
//! optional reclaiming subscription in the same group beside it), reliable list or channel, and
//! publishing to any of the three.

use ruststream::prelude::*;
use ruststream_fred::list::RedisListPublish;
use ruststream_fred::pubsub::RedisPubSubPublish;
use ruststream_fred::{
    DelayedRetry, RedisBroker, RedisList, RedisPubSub, RedisPublish, RedisPublishSteps as _,
    RedisStream, DELIVERY_COUNT_HEADER, PARTITION_KEY_HEADER,
};

use crate::service::{config, consume, handle, Outgoing, Payload, Service, Transport};

/// How the stream subscription takes the optional delayed-retry set; a method, so the
/// `#[subscriber]` attribute still reads the descriptor's type off the chain.
trait DelayedFromConfig {
    fn delayed_from_config(self) -> Self;
}

impl DelayedFromConfig for RedisStream {
    fn delayed_from_config(self) -> Self {
        match &consume().delayed {
            Some(key) => self.delayed_retry(DelayedRetry::DurableZset {
                key: key.clone(),
                ttl: None,
            }),
            None => self,
        }
    }
}

/// The key every Redis form reports as its partition key: a plain header (Redis has none).
fn partition_key(headers: &HeaderMap) -> Option<&[u8]> {
    headers.get(PARTITION_KEY_HEADER)
}

#[subscriber(
    RedisStream::new(consume().key.clone())
        .group(consume().group.clone())
        .consumer(consume().consumer.clone())
        .block(consume().block)
        .delayed_from_config()
)]
async fn stream_tail(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    let headers = ctx.headers();
    handle("stream", payload.0, headers, partition_key(headers), None).await
}

#[subscriber(
    RedisStream::reclaim(consume().key.clone(), consume().reclaim.unwrap_or_default())
        .group(consume().group.clone())
        .consumer(format!("{}-reclaim", consume().consumer))
        .block(consume().block)
        .delayed_from_config()
)]
async fn stream_reclaim(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    let headers = ctx.headers();
    // The count XPENDING gave the reclaimed entry: the runtime's redelivery count on this read.
    let count = headers
        .get_str(DELIVERY_COUNT_HEADER)
        .and_then(|v| v.parse().ok());
    handle("reclaim", payload.0, headers, partition_key(headers), count).await
}

#[subscriber(RedisList::new(consume().key.clone()).reliable().block(consume().block))]
async fn list(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    let headers = ctx.headers();
    handle("list", payload.0, headers, partition_key(headers), None).await
}

#[subscriber(RedisPubSub::new(consume().key.clone()))]
async fn channel(payload: &Payload<'_>, ctx: &mut Context<'_>) -> HandlerOutcome {
    let headers = ctx.headers();
    handle("pubsub", payload.0, headers, partition_key(headers), None).await
}

pub struct RedisService {
    running: RunningApp,
    streams: <RedisPublish as PublishPolicy<ruststream_fred::ConnectedRedisBroker>>::Live,
    lists: <RedisListPublish as PublishPolicy<ruststream_fred::ConnectedRedisBroker>>::Live,
    channels: <RedisPubSubPublish as PublishPolicy<ruststream_fred::ConnectedRedisBroker>>::Live,
}

/// Raw bytes, published as they are.
#[derive(Outgoing, Serialized)]
struct Raw(Vec<u8>);

pub async fn start() -> Result<RedisService, String> {
    let cfg = config();
    let broker = RedisBroker::standalone(cfg.url.clone()).bindable();
    let streams = broker.bind(RedisPublish);
    let lists = broker.bind(RedisListPublish::new());
    let channels = broker.bind(RedisPubSubPublish::new());
    let app = RustStream::new(AppInfo::new("interop-rust", "0.1.0")).with_broker(broker, |b| {
        let Some(c) = cfg.consume.as_ref() else {
            return;
        };
        let cap = std::num::NonZeroU32::new(c.max_attempts).unwrap_or(std::num::NonZeroU32::MIN);
        let dead = c.dead_letter.clone();
        match cfg.transport {
            Transport::Stream => {
                b.include(stream_tail)
                    .max_attempts(cap)
                    .dead_letter(dead.clone());
                if c.reclaim.is_some() {
                    b.include(stream_reclaim)
                        .max_attempts(cap)
                        .dead_letter(dead);
                }
            }
            Transport::List => {
                b.include(list).max_attempts(cap).dead_letter(dead);
            }
            Transport::PubSub => {
                b.include(channel).max_attempts(cap).dead_letter(dead);
            }
            Transport::File
            | Transport::Kafka
            | Transport::Pulsar
            | Transport::Nats
            | Transport::RabbitMq
            | Transport::Postgres => {
                unreachable!("the transports of other brokers have their own services")
            }
        }
    });
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    let streams = running
        .publisher(streams)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    let lists = running
        .publisher(lists)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    let channels = running
        .publisher(channels)
        .await
        .map_err(|e| format!("publisher: {e}"))?;
    Ok(RedisService {
        running,
        streams,
        lists,
        channels,
    })
}

impl Service for RedisService {
    async fn publish(&self, m: Outgoing) -> Result<(), String> {
        let raw = Raw(m.payload);
        // `partition_key` is the crate's own step (it resolves into the redis-partition-key header).
        macro_rules! send {
            ($publisher:expr) => {{
                let builder = $publisher
                    .message(&raw)
                    .with_headers(m.headers)
                    .to(m.key.as_str());
                match &m.partition_key {
                    Some(k) => builder.partition_key(k).publish().await,
                    None => builder.publish().await,
                }
            }};
        }
        let sent = match config().transport {
            Transport::List => send!(self.lists),
            Transport::PubSub => send!(self.channels),
            // The stream publisher; the other brokers' transports never reach a Redis service.
            _ => send!(self.streams),
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
