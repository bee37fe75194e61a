//! `bench-produce`: the crate's writer as a user drives it — `FileStreamer::connect`, a producer
//! anchored on the bench stream key, `send` returning a receipt future — rather than the low-level
//! `MessageSink` loop of `bench-write`, which skips the producer's channel, its task and its receipts.
//!
//! A burst of 1 awaits each receipt before the next send; a burst of N sends N messages, then
//! awaits their N receipts. The clock stops after a `flush`, because the crate's receipt only says
//! the message was framed into the writer's buffer: its bytes reach the file later, and a row that
//! stopped at the last receipt would count a write that has not happened yet.

use sea_streamer_file::{FileConnectOptions, FileStreamer};
use sea_streamer_types::{Producer as _, StreamKey, Streamer as _, StreamerUri};

use crate::{report, BENCH_KEY};

pub async fn run(path: &str, count: u64, size: usize, burst: u64) -> Result<(), String> {
    let uri: StreamerUri =
        format!("file://{path}").parse().map_err(|e| format!("uri: {e:?}"))?;
    let mut options = FileConnectOptions::default();
    options.set_create_only(true);
    let streamer = FileStreamer::connect(uri, options).await.map_err(|e| format!("connect: {e:?}"))?;
    let key = StreamKey::new(BENCH_KEY).map_err(|e| format!("{e:?}"))?;
    let mut producer = streamer
        .create_producer(key, Default::default())
        .await
        .map_err(|e| format!("producer: {e:?}"))?;
    let payload = vec![b'a'; size];
    let mut receipts = Vec::with_capacity(burst as usize);
    let started = std::time::Instant::now();
    let mut sent = 0;
    while sent < count {
        let n = burst.min(count - sent);
        for _ in 0..n {
            receipts.push(producer.send(payload.as_slice()).map_err(|e| format!("send: {e:?}"))?);
        }
        for receipt in receipts.drain(..) {
            receipt.await.map_err(|e| format!("receipt: {e:?}"))?;
        }
        sent += n;
    }
    producer.flush().await.map_err(|e| format!("flush: {e:?}"))?;
    report(count, started);
    // `end` closes the file's writer; a `disconnect` after it would find no writer to end.
    producer.end().await.map_err(|e| format!("end: {e:?}"))
}
