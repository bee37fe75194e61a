// Which engine TestApp's PostgreSQL stand-in runs on: the package's in-memory stand-in
// (`connectInProcess`) against PGlite (WASM PostgreSQL in the process, through `PgliteDriver`),
// the same job on each: connect, publish N messages of 512 bytes one at a time, then claim and ack
// them all (claims of 16). Per round and row: the start (for PGlite, creating the database and
// its table) and the job's rate; rounds interleaved, rows in a fresh order each round. Writes
// results/postgres-standin.json.
//   pnpm --filter @ruststream/tooling-bench bench:postgres-standin [messages=2000] [rounds=5]
import { writeFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import {
  type ConnectedPostgresBroker,
  PgliteDriver,
  PostgresBroker,
  PostgresQueue,
} from "@ruststream/postgres";
import { sourceRevision } from "../revision.js";
import { machine, median, summarize, tableLines } from "../stats.js";

const messages = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 5);
const payload = new Uint8Array(512).fill(120);

interface Trial {
  readonly startMs: number;
  readonly rate: number;
  readonly rssMiB: number;
}

/** Publishes `messages`, then claims and acks them all; answers messages per second. */
async function job(connected: ConnectedPostgresBroker): Promise<number> {
  const name = `standin-${Math.random().toString(36).slice(2)}`;
  const began = performance.now();
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  for (let i = 0; i < messages; i++) await publisher.publish({ name, payload });
  const subscription = await connected.subscribe(new PostgresQueue(name, { claim: 16 }));
  let acked = 0;
  while (acked < messages) {
    for (const delivery of await subscription.nextBatch(16)) {
      await delivery.ack();
      acked += 1;
    }
  }
  await subscription.close();
  return messages / ((performance.now() - began) / 1000);
}

const rss = () => Math.round(process.memoryUsage().rss / 2 ** 20);

const rows: Record<string, () => Promise<Trial>> = {
  "memory stand-in": async () => {
    const began = performance.now();
    const broker = new PostgresBroker({ url: "postgres://nobody@127.0.0.1:1/none" });
    const connected = await broker.connectInProcess({
      coordinator: new CountingCoordinator(),
      clock: new ManualClock(),
    });
    const startMs = performance.now() - began;
    const rate = await job(connected);
    const rssMiB = rss();
    await connected.shutdown();
    return { startMs, rate, rssMiB };
  },
  pglite: async () => {
    const began = performance.now();
    const db = await PGlite.create();
    const connected = await new PostgresBroker({
      driver: new PgliteDriver(db),
      ensureSchema: true,
    }).connect();
    const startMs = performance.now() - began;
    const rate = await job(connected);
    const rssMiB = rss();
    await connected.shutdown();
    await db.close();
    return { startMs, rate, rssMiB };
  },
};

const trials: Record<string, Trial[]> = Object.fromEntries(Object.keys(rows).map((r) => [r, []]));
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? Object.keys(rows) : Object.keys(rows).reverse();
  for (const row of order) {
    const trial = await rows[row]!();
    trials[row]!.push(trial);
    process.stdout.write(
      `round ${round + 1} ${row}: start ${trial.startMs.toFixed(0)} ms, ${trial.rate.toFixed(0)} msg/s, rss ${trial.rssMiB} MiB\n`,
    );
  }
}

const summaries = Object.entries(trials).map(([row, list]) =>
  summarize(
    row,
    list.map((t) => t.rate),
  ),
);
process.stdout.write(`\n${tableLines(summaries, (r) => `${r.toFixed(0)}/s`).join("\n")}\n`);
const starts = Object.fromEntries(
  Object.entries(trials).map(([row, list]) => [row, median(list.map((t) => t.startMs))]),
);
process.stdout.write(`median start: ${JSON.stringify(starts)}\n`);
writeFileSync(
  "results/postgres-standin.json",
  `${JSON.stringify(
    {
      bench: "postgres-standin",
      date: new Date().toISOString(),
      command: `bench:postgres-standin ${messages} ${rounds}`,
      source: sourceRevision(["packages/postgres", "packages/core"]),
      machine: machine(),
      messages,
      rows: summaries,
      trials,
      medianStartMs: starts,
    },
    null,
    2,
  )}\n`,
);
