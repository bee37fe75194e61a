//! `bench-redis-drain`: a RustStream service draining a pre-filled Redis stream, for the drain
//! benchmark in `tooling/bench` (`src/redis/drain/`).
//!
//! The service is what a team writes for a stream of JSON orders: an app on
//! `RedisBroker::standalone` (`ruststream-fred` 0.7.1) with one `#[subscriber]` on a
//! `RedisStream` in a consumer group, its handler taking `&Order`, a serde struct, and acking.
//! The mount is `.pipeline()`: the subscription's settles wait in a window and leave as one
//! `XACK` of every id once the read's `COUNT` (64) has settled. `--plain` mounts it without the
//! window, each `XACK` its own command, for comparison.
//!
//! The JSON is decoded by `serde_json::from_slice` into the struct on the runtime's
//! self-deserializing lane (`#[wire(decode = ..)]`), the same call the runtime's `JsonCodec`
//! makes. The program was built without `ruststream`'s `json` feature when this bench was
//! recorded; the feature is on now (for the traced `serve` mount's reply), and the handler stays on
//! the self-deserializing lane so its figures compare with those.
//!
//! Timed from the first handler call to the moment the group has nothing pending, so the last
//! window's `XACK` has been applied by the server. Prints one JSON line: `messages`, `seconds`,
//! `cpu_seconds` (this process's CPU time over the same span, every thread, to 10 ms) and `id_sum`
//! (the sum of the orders' ids, by which the bench checks every entry was decoded).

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ruststream_fred::stream::prelude::*;
use serde_json::json;
use tokio::sync::Notify;

/// The order every entry's `_payload` holds, as the bench's generator writes it (512 bytes).
#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Order {
    id: u64,
    sku: String,
    qty: u32,
    price_cents: u64,
    currency: String,
    customer: String,
    express: bool,
    note: String,
}

/// The handler's input: the order, decoded by serde on the runtime's self-deserializing lane.
#[derive(Deserialized)]
#[wire(decode = read_order)]
struct Incoming(Order);

fn read_order(payload: &[u8]) -> Result<Incoming, serde_json::Error> {
    serde_json::from_slice(payload).map(Incoming)
}

struct Drain {
    key: String,
    group: String,
    count: u64,
    seen: AtomicU64,
    id_sum: AtomicU64,
    /// When the first order was handled, and the process's CPU time then.
    first: OnceLock<(Instant, Duration)>,
    all_handled: Notify,
}

/// The CPU time of every thread of this process so far (user + system), from `/proc/self/stat`;
/// zero where there is none. Read twice a run, so its cost is not the handler's.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // After the command name, which is in parentheses and may hold spaces: fields 14 and 15 of
    // the line (utime, stime), in clock ticks of 1/100 s on Linux.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

static DRAIN: OnceLock<Drain> = OnceLock::new();

fn drain() -> &'static Drain {
    DRAIN
        .get()
        .expect("the drain is configured before the app is built")
}

/// The consumer name: every row drains a fresh key, so one name serves every run.
const CONSUMER: &str = "rust-bench";

/// Nothing to wait for once the stream is drained; the block only bounds the shutdown.
const BLOCK: Duration = Duration::from_millis(200);

#[subscriber(
    RedisStream::new(drain().key.clone())
        .group(drain().group.clone())
        .consumer(CONSUMER)
        .block(BLOCK)
)]
async fn drain_order(incoming: &Incoming) -> HandlerOutcome {
    let order = &incoming.0;
    let d = drain();
    d.first.get_or_init(|| (Instant::now(), cpu_time()));
    d.id_sum.fetch_add(order.id, Ordering::Relaxed);
    std::hint::black_box(order);
    if d.seen.fetch_add(1, Ordering::Relaxed) + 1 == d.count {
        d.all_handled.notify_one();
    }
    HandlerOutcome::ack()
}

/// `XPENDING key group` on a connection of its own: the group's pending count. RESP by hand, so
/// the probe needs no client of its own beyond a socket.
fn pending(address: &str, key: &str, group: &str) -> Result<u64, String> {
    let mut socket = TcpStream::connect(address).map_err(|e| format!("{address}: {e}"))?;
    socket.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(socket.try_clone().map_err(|e| e.to_string())?);
    let mut line = String::new();
    loop {
        let mut command = Vec::new();
        write!(command, "*3\r\n$8\r\nXPENDING\r\n").map_err(|e| e.to_string())?;
        for arg in [key, group] {
            write!(command, "${}\r\n{arg}\r\n", arg.len()).map_err(|e| e.to_string())?;
        }
        socket.write_all(&command).map_err(|e| e.to_string())?;
        // `*4`, then `:count`, then the smallest and largest ids and the consumers.
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        if !line.starts_with("*4") {
            return Err(format!("XPENDING answered {line:?}"));
        }
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let count: u64 = line
            .trim_start_matches(':')
            .trim_end()
            .parse()
            .map_err(|e| format!("XPENDING count {line:?}: {e}"))?;
        // The rest of the reply: two ids (bulk or nil) and the consumers (array or nil).
        for _ in 0..2 {
            line.clear();
            reader.read_line(&mut line).map_err(|e| e.to_string())?;
            if line.starts_with('$') && !line.starts_with("$-1") {
                line.clear();
                reader.read_line(&mut line).map_err(|e| e.to_string())?;
            }
        }
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let consumers: usize = line[1..].trim_end().parse().unwrap_or(0);
        for _ in 0..consumers {
            // `*2`, the name (bulk: two lines), the count (bulk: two lines).
            for _ in 0..5 {
                line.clear();
                reader.read_line(&mut line).map_err(|e| e.to_string())?;
            }
        }
        if count == 0 {
            return Ok(count);
        }
    }
}

/// `redis://host:port` to `host:port`.
fn address_of(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("redis://")
        .ok_or_else(|| format!("{url}: only a plain redis:// URL without credentials"))?;
    let host = rest.split('/').next().unwrap_or(rest);
    if host.contains('@') {
        return Err(format!(
            "{url}: only a plain redis:// URL without credentials"
        ));
    }
    Ok(host.to_owned())
}

/// Drains `count` entries of `key` as `group`, which the caller created at the stream's start.
pub async fn drain_stream(
    url: &str,
    key: &str,
    group: &str,
    count: u64,
    pipelined: bool,
) -> Result<(), String> {
    let address = address_of(url)?;
    DRAIN
        .set(Drain {
            key: key.to_owned(),
            group: group.to_owned(),
            count,
            seen: AtomicU64::new(0),
            id_sum: AtomicU64::new(0),
            first: OnceLock::new(),
            all_handled: Notify::new(),
        })
        .map_err(|_| "one drain per process".to_owned())?;
    let app = RustStream::new(AppInfo::new("bench-rust", "0.1.0")).with_broker(
        RedisBroker::standalone(url.to_owned()),
        |b| {
            if pipelined {
                b.include(drain_order.pipeline());
            } else {
                b.include(drain_order);
            }
        },
    );
    let running = app.start().await.map_err(|e| format!("start: {e}"))?;
    eprintln!("ready");
    let d = drain();
    d.all_handled.notified().await;
    let (key, group) = (d.key.clone(), d.group.clone());
    tokio::task::spawn_blocking(move || pending(&address, &key, &group))
        .await
        .map_err(|e| e.to_string())??;
    let (seconds, cpu_seconds) = d.first.get().map_or((0.0, 0.0), |(at, cpu)| {
        (
            at.elapsed().as_secs_f64(),
            cpu_time().saturating_sub(*cpu).as_secs_f64(),
        )
    });
    println!(
        "{}",
        json!({
            "messages": d.seen.load(Ordering::Relaxed),
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "id_sum": d.id_sum.load(Ordering::Relaxed).to_string(),
        })
    );
    match tokio::time::timeout(Duration::from_secs(10), running.shutdown()).await {
        Ok(result) => result.map_err(|e| format!("shutdown: {e}")),
        Err(_) => Err("shutdown took more than 10 s".to_owned()),
    }
}
