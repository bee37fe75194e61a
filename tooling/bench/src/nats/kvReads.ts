// NATS KV reads: KvBucket's keys() and history() by direct batch gets (NATS 2.11, one request
// each) against the reads they replace, a direct get a key (the bucket's subjects first, 100 gets
// at a time) and a direct get an entry, on one bucket of the NATS server of tooling/brokers. The
// rows run interleaved over rounds in one process; each read's result is checked (every key, every
// entry) so no row is timed doing less.
//
//   pnpm --filter @ruststream/tooling-bench bench:nats-kv [keys] [rounds]
//
// keys: how many keys the bucket holds (default 1000, at most 1024: past it keys() reads a key at
// a time anyway); the history row reads one key of 64 entries. NATS_URL picks the server; without
// it tooling/brokers starts its own.
import { loadavg } from "node:os";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { NatsBroker, NatsKv } from "@ruststream/nats";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { byRound, ratioRange, summarize, tableLines } from "../stats.js";

const keyCount = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 7);
if (!Number.isSafeInteger(keyCount) || keyCount < 1 || keyCount > 1024)
  throw new Error(
    `keys: 1 to 1024 (the most one direct batch get answers), not ${process.argv[2]}`,
  );
if (process.env.NATS_URL === undefined) await ensureBrokers(["nats"]);
const url = process.env.NATS_URL;
if (url === undefined) throw new Error("no NATS: set NATS_URL, or start tooling/brokers");

const bucket = `bench_kv_${process.pid}`;
const stream = `KV_${bucket}`;
const entries = 64;
const connected = await new NatsBroker({ servers: url }).connect();
const nc = await connect({ servers: url, name: "bench-nats-kv" });
const jsm = await jetstreamManager(nc);
try {
  const kv = await new NatsKv(bucket, { declare: { history: entries, storage: "memory" } }).pair(
    connected,
  );
  for (let i = 0; i < keyCount; i += 100)
    await Promise.all(
      Array.from({ length: Math.min(100, keyCount - i) }, (_, j) => kv.put(`k.${i + j}`, i + j)),
    );
  for (let i = 0; i < entries; i++) await kv.put("h", i);

  /** The keys as the replaced code read them: the subjects, then a direct get each, 100 at a time. */
  const keysByGets = async (): Promise<number> => {
    const info = await jsm.streams.info(stream, { subjects_filter: `$KV.${bucket}.>` });
    const subjects = Object.keys(info.state.subjects ?? {});
    let values = 0;
    for (let i = 0; i < subjects.length; i += 100) {
      const got = await Promise.all(
        subjects
          .slice(i, i + 100)
          .map((subject) => jsm.direct.getMessage(stream, { last_by_subj: subject })),
      );
      values += got.filter(
        (sm) => sm !== null && (sm.header?.get("KV-Operation") ?? "") === "",
      ).length;
    }
    return values;
  };
  /** A history as the replaced code read it: a direct get an entry (next_by_subj). */
  const historyByGets = async (): Promise<number> => {
    let read = 0;
    for (let seq = 1; ; ) {
      const sm = await jsm.direct.getMessage(stream, { next_by_subj: `$KV.${bucket}.h`, seq });
      if (sm === null) return read;
      read++;
      seq = sm.seq + 1;
    }
  };
  const rows: Record<string, () => Promise<number>> = {
    "keys: batch": async () => (await kv.keys()).length,
    "keys: get a key": keysByGets,
    "history: batch": async () => (await kv.history("h")).length,
    "history: get an entry": historyByGets,
  };
  const expected: Record<string, number> = {
    "keys: batch": keyCount + 1,
    "keys: get a key": keyCount + 1,
    "history: batch": entries,
    "history: get an entry": entries,
  };
  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(rows).map((r) => [r, []]));
  // A first untimed round warms the connections and the server.
  for (let round = 0; round <= rounds; round++) {
    for (const [name, read] of Object.entries(rows)) {
      const started = performance.now();
      const got = await read();
      const ms = performance.now() - started;
      if (got !== expected[name]) throw new Error(`${name}: read ${got}, not ${expected[name]}`);
      if (round > 0) rates[name]!.push(1000 / ms);
    }
  }
  console.log(
    `NATS KV reads, a bucket of ${keyCount} keys and one of ${entries} entries, ${rounds} rounds; load ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
  const summaries = Object.keys(rows).map((name) => summarize(name, rates[name]!));
  for (const line of tableLines(summaries, (rate) => `${rate.toFixed(1)}/s`)) console.log(line);
  console.log(
    `keys: batch / get a key, by round: ${ratioRange(byRound(rates["keys: batch"]!, rates["keys: get a key"]!))}`,
  );
  console.log(
    `history: batch / get an entry, by round: ${ratioRange(byRound(rates["history: batch"]!, rates["history: get an entry"]!))}`,
  );
} finally {
  await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
  await connected.shutdown();
}
