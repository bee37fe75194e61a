// How the librdkafka engine pulls records, chosen by measuring raw loops of each setting draining a
// backlog (tooling/bench/README.md, "Kafka"); a user's `config()` entry still overrides the back-off.

/**
 * Records one `consume` call may hand over: what librdkafka has already fetched, up to this. Not the
 * 1000 a raw loop drains fastest with: a subscription pauses its partitions once it buffers its
 * `prefetch` (512 by default), and batches of 1000 paused them at every call, each resume fetching
 * again (the full app drained 1.6k records a second so).
 */
export const CONSUME_MAX = 256;

/** How long a `consume` call waits for its first record (the rest are what is already fetched). */
export const CONSUME_WAIT_MS = 100;

/**
 * librdkafka's `fetch.queue.backoff.ms`: how long its fetcher waits before fetching again once the
 * local queue holds more than `queued.min.messages`. Its default, 1000 ms, stalls a consumer that has
 * fallen behind for up to a second at a time; 100 ms keeps the queue fed.
 */
export const FETCH_BACKOFF_MS = 100;
