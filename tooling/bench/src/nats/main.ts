// NATS: the full app against the raw nats.js loop a careful user writes, on core NATS (a subject the
// generator publishes to under credit) and on JetStream (a pre-filled stream drained by a durable
// pull consumer, each message acked, or runs of them under ack_policy all), on the NATS server of tooling/brokers, rows interleaved over
// rounds, each row and round in a process of its own (../rows/drainRounds.ts), its peak memory
// measured.
//
//   pnpm --filter @ruststream/tooling-bench bench:nats [count] [rounds] [rows] [file]
//
// rows: a comma list of rows.ts's keys (default all of them: raw-core,app-core,raw-js,raw-js-all,
// app-js); file: the results' name under results/ (default nats.json for count >= 100k and rounds
// >= 5, else nats-quick.json). NATS_URL and NATS_MONITOR_URL pick the server; without them tooling/brokers
// starts its own. Before every JetStream drain a fresh stream (file storage) is filled with orders
// 0..count-1, each publish acknowledged by the stream (untimed); after it the durable consumer
// must have nothing pending or unacknowledged, and the stream is deleted. A core row is checked by
// its count and the sum of its ids: the generator never overruns it, so nothing may be lost.
import { fork } from "node:child_process";
import { jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { orderBytes, orderPayload } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { drainArgs } from "../rows/drainArgs.js";
import { runDrainBench } from "../rows/drainRounds.js";
import { every, window } from "./credit.js";
import { type NatsTrial, pullSize, rowName, rowNames } from "./rows.js";

const args = drainArgs("nats", Object.keys(rowNames));
// Every row known before anything starts.
for (const key of args.chosen) rowName(key);

if (process.env.NATS_URL === undefined || process.env.NATS_MONITOR_URL === undefined) {
  await ensureBrokers(["nats"]);
}
const url = process.env.NATS_URL;
const monitorUrl = process.env.NATS_MONITOR_URL;
if (url === undefined || monitorUrl === undefined) {
  throw new Error("no NATS: set NATS_URL and NATS_MONITOR_URL, or start tooling/brokers");
}

const generator = fork(new URL("./generator.ts", import.meta.url), [url], {
  execArgv: process.execArgv.filter((flag) => !/^--(cpu|heap)-prof/.test(flag)),
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
await new Promise<void>((resolve, reject) => {
  generator.once("message", () => resolve());
  generator.once("exit", (code) => reject(new Error(`the generator exited (${code})`)));
});

const nc = await connect({ servers: url, name: "bench-nats-fill" });
const js = jetstream(nc);
const jsm = await jetstreamManager(nc);
/** Publishes awaiting the stream's acknowledgement while the fill goes. */
const fillWindow = 1_000;
let trials = 0;

async function fresh(key: string, messages: number): Promise<NatsTrial> {
  const n = trials++;
  const subject = `bench.nats.${process.pid}.${n}`;
  if (key.endsWith("core"))
    return { kind: "core", url: url!, monitorUrl: monitorUrl!, subject, count: messages };
  const stream = `BENCH_NATS_${process.pid}_${n}`;
  await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.File });
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < messages; i++) {
    pending.push(js.publish(subject, orderPayload(i)));
    if (pending.length === fillWindow) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  return { kind: "jetstream", url: url!, stream, subject, durable: "bench", count: messages };
}

/** How long the consumer's counts may take to show the row's last acks. */
const settleMs = 10_000;

async function finish(where: string, trial: NatsTrial): Promise<void> {
  if (trial.kind === "core") return;
  const deadline = performance.now() + settleMs;
  for (;;) {
    const info = await jsm.consumers.info(trial.stream, trial.durable);
    if (info.num_pending === 0 && info.num_ack_pending === 0) break;
    if (performance.now() > deadline) {
      throw new Error(
        `${where}: the consumer leaves ${info.num_pending} pending and ${info.num_ack_pending} unacknowledged`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await jsm.streams.delete(trial.stream);
}

const server = nc.info?.version ?? "unknown";
await runDrainBench<NatsTrial>({
  title: `NATS ${server}, ${orderBytes}-byte JSON orders on core NATS and on a JetStream stream`,
  scenario:
    "Core NATS: a subject published to under credit (never more than 4096 orders ahead of the row) received by the raw nats.js subscribe callback and by the full app (NatsSubject). JetStream: a pre-filled stream (file storage) drained by a durable pull consumer, the raw loop consume() with an ack each, the same loop on an ack_policy all consumer acking the latest message once a quarter of the pull is unacked and at the end of each turn, and the full app (JetStreamSubject, the same pull size, ack by the runtime). Each order decoded into a typed value; each row and round in a process of its own, its peak resident set measured",
  args,
  rowModule: new URL("./rows.ts", import.meta.url).href,
  rowName,
  pairs: [
    ["app-core", "raw-core", 0.9],
    ["app-js", "raw-js", 0.9],
    ["app-js", "raw-js-all", 0.9],
  ],
  fresh,
  finish,
  facts: {
    source: sourceRevision(["packages/core/src", "packages/nats/src"]),
    server,
    orderBytes,
    pullSize,
    credit: { every, window },
  },
});
await nc.close();
generator.send("exit");
