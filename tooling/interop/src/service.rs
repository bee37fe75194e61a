//! `serve`: one RustStream service, driven by a test through JSON lines.
//!
//! The service is what a team deploys beside a TypeScript one: a RustStream app on RustStream's own
//! broker crate (`ruststream-fred` for Redis streams, reliable lists and pub/sub; `ruststream-sea-file`
//! for stream files), its handlers settled by the RustStream runtime (retries, the cap, the dead
//! letter, the decode policy). A test starts it with its configuration, then talks to it: stdin takes
//! one command per line, stdout carries one reply per command and an event per thing the service saw.
//! The README of this folder documents the protocol; `redis_service.rs`, `file_service.rs`,
//! `kafka_service.rs`, `pulsar_service.rs`, `nats_service.rs`, `rabbitmq_service.rs` and
//! `postgres_service.rs` hold the brokers' apps.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write as _;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use base64::{engine::general_purpose::STANDARD, Engine};
use ruststream::runtime::{Deserialized, Input, SoloDeserialized};
use ruststream::runtime::{HandlerOutcome, RETRY_COUNT_HEADER};
use ruststream::HeaderMap;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt as _, BufReader};

/// What `serve` was started with: its one JSON argument.
#[derive(Debug)]
pub struct Config {
    pub transport: Transport,
    /// `redis://host:port` for the Redis transports, `host:port` (bootstrap servers) for Kafka,
    /// `pulsar://host:port` for Pulsar, `nats://host:port` for NATS, `amqp://host:port` for
    /// RabbitMQ, `postgres://...` for PostgreSQL.
    pub url: String,
    /// The `.ss` file for the file transport.
    pub path: String,
    pub consume: Option<Consume>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stream,
    List,
    PubSub,
    File,
    Kafka,
    Pulsar,
    Nats,
    RabbitMq,
    Postgres,
}

/// The subscriber the service mounts, when it consumes.
#[derive(Debug)]
pub struct Consume {
    /// Stream, list or channel key, or the file's stream key.
    pub key: String,
    /// Stream consumer group and consumer (always explicit: RustStream's automatic consumer names
    /// count per process, so two processes would share `ruststream-0`). The group is also Kafka's
    /// consumer group and Pulsar's subscription name.
    pub group: String,
    pub consumer: String,
    /// How long one blocking read waits on the server, and so how often the delayed-retry sweeper
    /// runs on a stream.
    pub block: Duration,
    /// Streams: also mount `RedisStream::reclaim` in the same group, taking entries another consumer
    /// left pending this long.
    pub reclaim: Option<Duration>,
    /// Streams: the durable delayed-retry sorted set (`DelayedRetry::DurableZset`).
    pub delayed: Option<String>,
    /// `"json"`: a payload that is not JSON fails to decode, and the runtime's decode policy settles
    /// it. `"bytes"` (the default): any payload reaches the handler.
    pub json: bool,
    pub max_attempts: u32,
    pub dead_letter: String,
    /// Files: read the stream key from its first message and end there (`FileStream::replay`),
    /// instead of following the live tail.
    pub replay: bool,
    /// Files: open at this sequence (`start_at(FilePosition::sequence(n))`), how a RustStream file
    /// service resumes.
    pub start_at: Option<u64>,
    /// Hold from the first delivery on (the `hold` command, before anything can arrive).
    pub hold: bool,
    /// Files: mount the subscriber under RustStream's OpenTelemetry integration (the `otel`
    /// feature) and reply with each payload to this key: its consume layer opens a span per
    /// delivery (a new trace when the delivery carries none) and its propagation transform puts
    /// that span's context on the reply, so a test sees a trace a RustStream service started.
    pub otel_reply: Option<&'static str>,
    /// NATS: the JetStream stream the subject is read from (a pull consumer, durable as `group`);
    /// without it, a core subject.
    pub stream: Option<String>,
    /// NATS: the core subject is read in the queue group `group`, which the server shares out
    /// among its members, whatever their language.
    pub queue: bool,
    /// RabbitMQ: a quorum queue (the server counts deliveries), declared by the crate.
    pub quorum: bool,
    /// RabbitMQ, a classic queue: delayed retries through the crate's TTL waiting queue,
    /// `<key>.retry` (`.delay(Delay::dlx_ttl())`), which the crate declares; without it a
    /// `retry_after` is the runtime's copy held in the process.
    pub delay: bool,
    /// RabbitMQ: the broker's prefetch (`LapinBroker::prefetch`), the deliveries the consumer
    /// holds unacked at most; without it, none (the server's unlimited).
    pub prefetch: Option<std::num::NonZeroU16>,
    /// NATS and RabbitMQ: answer a request (a delivery naming its `reply-to`) with `rust:` and the
    /// payload, as a responder of the broker's own does.
    pub reply: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

pub fn config() -> &'static Config {
    CONFIG
        .get()
        .expect("the configuration is set before the app is built")
}

pub fn consume() -> &'static Consume {
    config()
        .consume
        .as_ref()
        .expect("a subscriber is mounted only with a consume section")
}

fn str_field<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

fn parse_config(text: &str) -> Result<Config, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("config: {e}"))?;
    let transport = match str_field(&v, "transport") {
        Some("stream") => Transport::Stream,
        Some("list") => Transport::List,
        Some("pubsub") => Transport::PubSub,
        Some("file") => Transport::File,
        Some("kafka") => Transport::Kafka,
        Some("pulsar") => Transport::Pulsar,
        Some("nats") => Transport::Nats,
        Some("rabbitmq") => Transport::RabbitMq,
        Some("postgres") => Transport::Postgres,
        other => {
            return Err(format!(
                "config: transport {other:?}: stream, list, pubsub, file, kafka, pulsar, nats, rabbitmq or postgres"
            ))
        }
    };
    let consume = match v.get("consume") {
        None | Some(Value::Null) => None,
        Some(c) => {
            let key = str_field(c, "key")
                .ok_or("config: consume.key is required")?
                .to_owned();
            let ms = |name: &str| {
                c.get(name)
                    .and_then(Value::as_u64)
                    .map(Duration::from_millis)
            };
            let (quorum, delay) = (
                c.get("quorum").and_then(Value::as_bool).unwrap_or(false),
                c.get("delay").and_then(Value::as_bool).unwrap_or(false),
            );
            if quorum && delay {
                return Err("config: consume.delay is for a classic queue, not with quorum".into());
            }
            Some(Consume {
                group: str_field(c, "group").unwrap_or("interop").to_owned(),
                consumer: str_field(c, "consumer").unwrap_or("rust").to_owned(),
                block: ms("block_ms").unwrap_or(Duration::from_millis(200)),
                reclaim: ms("reclaim_ms"),
                delayed: str_field(c, "delayed_key").map(str::to_owned),
                json: str_field(c, "codec") == Some("json"),
                max_attempts: c.get("max_attempts").and_then(Value::as_u64).unwrap_or(3) as u32,
                dead_letter: str_field(c, "dead_letter")
                    .map_or_else(|| format!("{key}.dlq"), str::to_owned),
                replay: c.get("replay").and_then(Value::as_bool).unwrap_or(false),
                start_at: c.get("start_at").and_then(Value::as_u64),
                hold: c.get("hold").and_then(Value::as_bool).unwrap_or(false),
                // Leaked once per process: the reply clause of `#[subscriber]` takes a
                // `&'static str`, and `serve` parses one configuration.
                otel_reply: str_field(c, "otel_reply")
                    .map(|key| &*Box::leak(key.to_owned().into_boxed_str())),
                stream: str_field(c, "stream").map(str::to_owned),
                queue: c.get("queue").and_then(Value::as_bool).unwrap_or(false),
                quorum,
                delay,
                prefetch: match c.get("prefetch") {
                    None => None,
                    Some(v) => Some(
                        v.as_u64()
                            .and_then(|n| u16::try_from(n).ok())
                            .and_then(std::num::NonZeroU16::new)
                            .ok_or("consume.prefetch: a count from 1 to 65535")?,
                    ),
                },
                reply: c.get("reply").and_then(Value::as_bool).unwrap_or(false),
                key,
            })
        }
    };
    Ok(Config {
        transport,
        url: str_field(&v, "url").unwrap_or("").to_owned(),
        path: str_field(&v, "path").unwrap_or("").to_owned(),
        consume,
    })
}

/// One line on stdout. A line is written whole, so events of concurrent handlers never interleave.
pub fn emit(line: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn b64(bytes: &[u8]) -> Value {
    Value::String(STANDARD.encode(bytes))
}

fn unb64(v: &Value, what: &str) -> Result<Vec<u8>, String> {
    let text = v
        .as_str()
        .ok_or_else(|| format!("{what} must be base64 text"))?;
    STANDARD.decode(text).map_err(|e| format!("{what}: {e}"))
}

/// What the handler does with a payload the test named.
#[derive(Debug, Clone, Copy)]
enum Failure {
    /// `HandlerOutcome::retry()`: the runtime's immediate retry, under the cap.
    Retry,
    /// `HandlerOutcome::retry_after(..)`: a delayed retry (the durable sorted set on a stream that
    /// has one).
    RetryAfter(Duration),
}

struct State {
    fail_on: BTreeMap<Vec<u8>, Failure>,
    hold: bool,
    seen: Vec<Value>,
}

static STATE: Mutex<State> = Mutex::new(State {
    fail_on: BTreeMap::new(),
    hold: false,
    seen: Vec::new(),
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The payload as it arrived, on the self-deserializing lane: with `codec: "json"` a payload that
/// is not JSON fails here, and the runtime settles it by the subscriber's decode policy, as it does
/// a payload its JSON codec cannot read. The bytes stay at hand, so the report is byte for byte.
pub struct Payload<'a>(pub &'a [u8]);

impl Deserialized for Payload<'_> {
    type Output<'a> = Payload<'a>;
    type Error = String;

    fn from_payload(payload: &[u8]) -> Result<Payload<'_>, String> {
        let json = config().consume.as_ref().is_some_and(|c| c.json);
        if json {
            if let Err(e) = serde_json::from_slice::<Value>(payload) {
                emit(
                    json!({ "event": "decode_failure", "payload": b64(payload), "error": e.to_string() }),
                );
                return Err(format!("not JSON: {e}"));
            }
        }
        Ok(Payload(payload))
    }
}

impl Input for Payload<'_> {
    type Axis = SoloDeserialized<Payload<'static>>;
}

/// Every handler's body: reports the delivery, then answers as the test asked.
///
/// `via` names the subscription that delivered it. `partition_key` is what the broker crate's
/// message reports (`IncomingMessage::partition_key`), which a handler does not see, so each mount
/// passes the crate's own rule. `delivery_count` is the count a reclaiming read injects (the
/// runtime's `redelivery_count` there); elsewhere the runtime counts the retry-count header.
pub async fn handle(
    via: &str,
    payload: &[u8],
    headers: &HeaderMap,
    partition_key: Option<&[u8]>,
    delivery_count: Option<u64>,
) -> HandlerOutcome {
    let retry_count = headers
        .get_str(RETRY_COUNT_HEADER)
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let attempt = delivery_count.unwrap_or(retry_count + 1);
    let (failure, hold) = {
        let s = state();
        (s.fail_on.get(payload).copied(), s.hold)
    };
    let outcome = match (hold, failure) {
        (true, _) => "hold",
        (false, Some(Failure::Retry)) => "retry",
        (false, Some(Failure::RetryAfter(_))) => "retry_after",
        (false, None) => "ack",
    };
    let event = json!({
        "event": "delivery",
        "via": via,
        "payload": b64(payload),
        "headers": headers.iter().map(|(n, v)| json!([n, b64(v)])).collect::<Vec<_>>(),
        "partition_key": partition_key.map(b64),
        "retry_count": retry_count,
        "attempt": attempt,
        "content_type": headers.content_type(),
        "outcome": outcome,
    });
    state().seen.push(event.clone());
    emit(event);
    match (hold, failure) {
        // Read and never settled: the delivery stays with the broker (pending, in processing) until
        // the test kills the process.
        (true, _) => std::future::pending().await,
        (false, Some(Failure::Retry)) => HandlerOutcome::retry(),
        (false, Some(Failure::RetryAfter(delay))) => HandlerOutcome::retry_after(delay),
        (false, None) => HandlerOutcome::ack(),
    }
}

/// One message of a `publish` command.
pub struct Outgoing {
    pub key: String,
    pub payload: Vec<u8>,
    pub headers: HeaderMap,
    pub partition_key: Option<Vec<u8>>,
}

fn parse_outgoing(v: &Value) -> Result<Outgoing, String> {
    let key = str_field(v, "key")
        .ok_or("publish: a message needs a key")?
        .to_owned();
    let payload = unb64(v.get("payload").unwrap_or(&Value::Null), "payload")?;
    let mut headers = HeaderMap::new();
    if let Some(list) = v.get("headers").and_then(Value::as_array) {
        for pair in list {
            let name = pair
                .get(0)
                .and_then(Value::as_str)
                .ok_or("a header is [name, base64]")?;
            headers.insert(
                name.to_owned(),
                unb64(pair.get(1).unwrap_or(&Value::Null), name)?,
            );
        }
    }
    let partition_key = match v.get("partition_key") {
        None | Some(Value::Null) => None,
        Some(k) => Some(unb64(k, "partition_key")?),
    };
    Ok(Outgoing {
        key,
        payload,
        headers,
        partition_key,
    })
}

/// A reply to a request: its payload and headers.
pub struct Reply {
    pub payload: Vec<u8>,
    pub headers: HeaderMap,
}

/// What a running service offers the command loop: its publishers, its requests and its shutdown.
pub trait Service {
    fn publish(&self, message: Outgoing) -> impl Future<Output = Result<(), String>>;
    /// Sends `message` as a request through the crate's `RequestReply` and awaits its reply.
    fn request(
        &self,
        message: Outgoing,
        timeout: Duration,
    ) -> impl Future<Output = Result<Reply, String>> {
        let _ = (message, timeout);
        async { Err("serve sends requests on nats and rabbitmq only".to_owned()) }
    }
    fn shutdown(self) -> impl Future<Output = Result<(), String>>;
}

/// What a responder answers a request with: `rust:` and the payload, so a test tells the
/// answer from an echo of the request.
pub fn answer(payload: &[u8]) -> Vec<u8> {
    [b"rust:".as_slice(), payload].concat()
}

async fn command<S: Service>(service: &S, line: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
    let op = str_field(&v, "op").ok_or("a command needs an op")?;
    match op {
        "publish" => {
            let messages = v
                .get("messages")
                .and_then(Value::as_array)
                .ok_or("publish: messages")?;
            for m in messages {
                service.publish(parse_outgoing(m)?).await?;
            }
            Ok(json!({ "reply": "publish", "count": messages.len() }))
        }
        "fail_on" => {
            let failure = match v.get("delay_ms").and_then(Value::as_u64) {
                Some(ms) => Failure::RetryAfter(Duration::from_millis(ms)),
                None => Failure::Retry,
            };
            let payloads = v
                .get("payloads")
                .and_then(Value::as_array)
                .ok_or("fail_on: payloads")?;
            let mut s = state();
            for p in payloads {
                s.fail_on.insert(unb64(p, "payload")?, failure);
            }
            Ok(json!({ "reply": "fail_on" }))
        }
        "hold" => {
            state().hold = true;
            Ok(json!({ "reply": "hold" }))
        }
        "request" => {
            let message = v.get("message").ok_or("request: message")?;
            let timeout =
                Duration::from_millis(v.get("timeout_ms").and_then(Value::as_u64).unwrap_or(5000));
            let reply = service.request(parse_outgoing(message)?, timeout).await?;
            Ok(json!({
                "reply": "request",
                "payload": b64(&reply.payload),
                "headers": reply.headers.iter().map(|(n, v)| json!([n, b64(v)])).collect::<Vec<_>>(),
            }))
        }
        "report" => Ok(json!({ "reply": "report", "seen": state().seen.clone() })),
        other => Err(format!("unknown op {other:?}")),
    }
}

/// Runs the service: `config` is the JSON argument; returns once told to exit (or stdin closed) and
/// the app shut down.
pub async fn serve(config_text: &str) -> Result<(), String> {
    let parsed = parse_config(config_text)?;
    let transport = parsed.transport;
    state().hold = parsed.consume.as_ref().is_some_and(|c| c.hold);
    CONFIG
        .set(parsed)
        .map_err(|_| "serve runs once per process".to_owned())?;
    match transport {
        Transport::File => run(crate::file_service::start().await?).await,
        Transport::Kafka => run(crate::kafka_service::start().await?).await,
        Transport::Pulsar => run(crate::pulsar_service::start().await?).await,
        Transport::Nats => run(crate::nats_service::start().await?).await,
        Transport::RabbitMq => run(crate::rabbitmq_service::start().await?).await,
        Transport::Postgres => run(crate::postgres_service::start().await?).await,
        Transport::Stream | Transport::List | Transport::PubSub => {
            run(crate::redis_service::start().await?).await
        }
    }
}

async fn run<S: Service>(service: S) -> Result<(), String> {
    emit(json!({ "event": "ready" }));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => return Err(format!("stdin: {e}")),
        };
        if line.trim().is_empty() {
            continue;
        }
        if line.contains("\"exit\"")
            && serde_json::from_str::<Value>(&line).is_ok_and(|v| v["op"] == "exit")
        {
            break;
        }
        match command(&service, &line).await {
            Ok(reply) => emit(reply),
            Err(error) => {
                let op = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("op").cloned());
                emit(json!({ "reply": op, "error": error }));
            }
        }
    }
    service.shutdown().await?;
    emit(json!({ "reply": "exit" }));
    Ok(())
}
