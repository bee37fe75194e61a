// Pulsar: our wire client (@ruststream/pulsar/wire) against Pulsar's Java client, and the full app
// against our bare consume loop, on one broker, 512-byte JSON orders, rows interleaved round by round:
//
//   produce: ours / Java   `count` orders, the same batching (1000 messages, 128 KiB, 1 ms), at most
//                          `window` unconfirmed; timed from the first send to the last receipt
//   consume: Java / ours   a pre-filled topic drained from a Shared subscription, each order's number
//                          read from its digits, each acked; timed from the first order in hand to the
//                          last ack
//   consume: bare loop     ours again, decoding each order with core's JSON codec (the app's)
//   consume: full app      a RustStream app on PulsarBroker, Shared, a handler typed Order; the
//                          runtime decodes and acks
//
//   pnpm --filter @ruststream/tooling-bench bench:pulsar [seconds] [rounds] [rows] [file]
//
// rows: a comma list of produce-wire, produce-java, consume-java, consume-wire, consume-bare, app
// (default all); file: the results' name under results/ (default pulsar.json for a full run, else
// pulsar-quick.json). PULSAR_URL picks the broker, else tooling/brokers starts its standalone one.
// Each Node row runs each round in a process of its own (nodeRows.ts through ../rows/: an untimed
// warm-up drain on a topic of its own, then the timed one), which answers its peak resident set
// too. The Java client runs in its own long-lived process (javaWorker.ts), which also fills every
// consume row's topic before the row (untimed); its peak is the JVM's over the row. Every row is checked: produce rows by their receipts and
// the topic's msgInCounter, consume rows by the count and sum of the order numbers they read and
// an empty backlog after.
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { sourceRevision } from "../revision.js";
import { peakSinceReset, resetPeak } from "../rows/livePeak.js";
import { type PeakColumns, PeakTable } from "../rows/peakTable.js";
import { type Apart, runApart } from "../rows/rowProcess.js";
import { machine, median, type RowSummary, summarize, tableLines } from "../stats.js";
import { createTopic, deleteTopic, expectDrained, topicStats } from "./admin.js";
import { JavaWorker } from "./javaWorker.js";
import type { NodeTrial } from "./nodeRows.js";
import { numberSum, orderBytes } from "./order.js";
import type { Measured } from "./rows.js";

const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 5);
const rowArg =
  process.argv[4] ?? "produce-wire,produce-java,consume-java,consume-wire,consume-bare,app";
const fileArg = process.argv[5];
/** Messages a producer may have unconfirmed, in both clients. */
const window = 10_000;
const subscription = "bench";
const warmCount = 20_000;
const sizingCount = 100_000;

if (process.env.PULSAR_URL === undefined) await ensureBrokers(["pulsar"]);
else if (process.env.PULSAR_LIBS === undefined) await ensureBrokers(["pulsar"]);
const url = process.env.PULSAR_URL;
if (url === undefined)
  throw new Error("no Pulsar broker: set PULSAR_URL, or start tooling/brokers");

const java = await JavaWorker.start(url);
let topics = 0;

/** A row: its table name, its kind, and where it runs (a Node process of its own, or the JVM). */
type Row =
  | { readonly name: string; readonly kind: "produce" | "consume"; readonly runs: "node" }
  | {
      readonly name: string;
      readonly kind: "produce" | "consume";
      readonly runs: "java";
      readonly run: (topic: string, count: number) => Promise<Measured>;
    };

const fromJava = (answer: Awaited<ReturnType<JavaWorker["produce"]>>): Measured => ({
  messages: answer.messages,
  ms: answer.seconds * 1000,
  cpuMs: answer.cpuSeconds * 1000,
  ...(answer.idSum === undefined ? {} : { idSum: BigInt(answer.idSum) }),
});

const rowTable = new Map<string, Row>([
  ["produce-wire", { name: "produce: ours (wire client)", kind: "produce", runs: "node" }],
  [
    "produce-java",
    {
      name: "produce: Java client",
      kind: "produce",
      runs: "java",
      run: async (topic, count) => fromJava(await java.produce(topic, count, window)),
    },
  ],
  [
    "consume-java",
    {
      name: "consume: Java client",
      kind: "consume",
      runs: "java",
      run: async (topic, count) => fromJava(await java.consume(topic, subscription, count)),
    },
  ],
  ["consume-wire", { name: "consume: ours (wire client)", kind: "consume", runs: "node" }],
  ["consume-bare", { name: "consume: bare wire loop, JSON", kind: "consume", runs: "node" }],
  ["app", { name: "consume: full app, typed JSON", kind: "consume", runs: "node" }],
]);
const chosen = rowArg.split(",");
for (const key of chosen) {
  if (!rowTable.has(key)) {
    throw new Error(
      `unknown row "${key}": give a comma list of ${[...rowTable.keys()].join(", ")}`,
    );
  }
}
const nodeRowModule = new URL("./nodeRows.ts", import.meta.url).href;

/** A fresh topic for a row of `kind`: a consume row's filled with `count` orders (untimed). */
async function freshTopic(kind: Row["kind"], count: number): Promise<string> {
  const topic = `bench-pulsar-${process.pid}-${topics++}`;
  if (kind === "consume") {
    await createTopic(topic, subscription);
    const filled = await java.produce(topic, count, window);
    if (filled.messages !== count)
      throw new Error(`fill of ${topic}: ${filled.messages} of ${count}`);
  } else {
    await createTopic(topic);
  }
  return topic;
}

/** A row's run on `topic` checked (the receipts and the broker's count, or the orders read and an
 * empty backlog), then the topic deleted. */
async function checkRun(row: Row, topic: string, count: number, measured: Measured) {
  const where = `${row.name} on ${topic}`;
  if (measured.messages !== count) throw new Error(`${where}: ${measured.messages} of ${count}`);
  if (row.kind === "produce") {
    const stored = (await topicStats(topic)).msgInCounter;
    if (stored !== count) throw new Error(`${where}: the broker counted ${stored} of ${count} in`);
  } else {
    if (measured.idSum !== numberSum(count)) {
      throw new Error(
        `${where}: order numbers summed to ${measured.idSum}, not ${numberSum(count)}`,
      );
    }
    await expectDrained(topic, subscription);
  }
  await deleteTopic(topic);
}

/**
 * One row on a fresh topic, checked. A Node row runs in a process of its own (../rows/), which
 * first runs it untimed on a warm-up topic of its own; a Java row runs in the long-lived JVM, whose
 * resident high-water mark is reset before the row and read after it.
 */
async function runRow(key: string, count: number): Promise<Apart<Measured>> {
  const row = rowTable.get(key)!;
  if (row.runs === "java") {
    const topic = await freshTopic(row.kind, count);
    resetPeak(java.pid);
    const measured = await row.run(topic, count);
    const memory = { maxRssKiB: peakSinceReset(java.pid) };
    await checkRun(row, topic, count, measured);
    return { measured, memory };
  }
  const warm = await freshTopic(row.kind, warmCount);
  const topic = await freshTopic(row.kind, count);
  const trial = (on: string, messages: number): NodeTrial => ({
    url: url!,
    topic: on,
    subscription,
    count: messages,
    window,
  });
  const apart = await runApart<Measured>({
    module: nodeRowModule,
    key,
    warm: trial(warm, warmCount),
    timed: trial(topic, count),
  });
  await checkRun(row, topic, count, apart.measured);
  await deleteTopic(warm);
  return apart;
}

const rateOf = (count: number, m: Measured) => (count / m.ms) * 1000;
const loadBefore = loadavg();
const source = sourceRevision(["packages/core/src", "packages/pulsar/src"]);

// An untimed warm-up of every row (the JIT of both processes sees every path), then a sizing run
// of each. The rows of a kind (produce, consume) then move the same count: the kind's fastest rate
// times the seconds asked for.
for (const key of chosen) await runRow(key, warmCount);
const fastest = new Map<Row["kind"], number>();
for (const key of chosen) {
  const row = rowTable.get(key)!;
  const rate = rateOf(sizingCount, (await runRow(key, sizingCount)).measured);
  process.stderr.write(`sizing: ${row.name} ${(rate / 1000).toFixed(1)} k/s\n`);
  fastest.set(row.kind, Math.max(fastest.get(row.kind) ?? 0, rate));
}
const counts = new Map<Row["kind"], number>(
  [...fastest].map(([kind, rate]) => [
    kind,
    Math.max(warmCount, Math.round((rate * seconds * 1.2) / 1000) * 1000),
  ]),
);
const countOf = (key: string) => counts.get(rowTable.get(key)!.kind)!;
process.stderr.write(
  `orders per row and round: ${[...counts].map(([kind, n]) => `${kind} ${n}`).join(", ")}\n`,
);

const rates = new Map<string, number[]>();
const durations = new Map<string, number[]>();
// CPU per order in microseconds, of the process running the row (Node's, or the JVM's): less at
// the mercy of the machine's load than a rate.
const cpuPerOrder = new Map<string, number[]>();
// The peak resident set of the row's process (a Node row's own; the JVM's over the row), MB.
const peaks = new PeakTable();
const push = (map: Map<string, number[]>, key: string, value: number) =>
  map.set(key, [...(map.get(key) ?? []), value]);
const began = performance.now();
for (let round = 0; round < rounds; round++) {
  // The order of the rows turns each round, so none always runs first.
  for (let i = 0; i < chosen.length; i++) {
    const key = chosen[(i + round) % chosen.length]!;
    const count = countOf(key);
    const { measured, memory } = await runRow(key, count);
    push(rates, key, rateOf(count, measured));
    push(durations, key, measured.ms / 1000);
    push(cpuPerOrder, key, (measured.cpuMs * 1000) / count);
    peaks.add(key, memory);
  }
  process.stderr.write(`round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
}
const wallSeconds = (performance.now() - began) / 1000;
const loadAfter = loadavg();
java.stop();

const rows: (RowSummary &
  PeakColumns & { key: string; seconds: number[]; cpuUsPerOrder: number[] })[] = chosen.map(
  (key) => ({
    ...summarize(rowTable.get(key)!.name, rates.get(key)!),
    key,
    seconds: durations.get(key)!,
    cpuUsPerOrder: cpuPerOrder.get(key)!,
    ...peaks.columns(key),
  }),
);
const byKey = new Map(rows.map((r) => [r.key, r]));
const ratio = (a: string, b: string) => {
  const top = byKey.get(a);
  const bottom = byKey.get(b);
  return top === undefined || bottom === undefined ? undefined : top.median / bottom.median;
};
const ratios = {
  produceOursToJava: ratio("produce-wire", "produce-java"),
  consumeOursToJava: ratio("consume-wire", "consume-java"),
  appToBareLoop: ratio("app", "consume-bare"),
};
// The full app's peak resident set over its raw loop's (the bare loop decoding the same JSON) and
// over the plain wire loop's (issue 26: at most 1.3).
const peakRatios = [
  peaks.ratio("app", "consume-bare"),
  peaks.ratio("app", "consume-wire"),
  peaks.ratio("consume-wire", "consume-java", false),
].filter((r) => r !== undefined);
const bare = byKey.get("consume-bare");
const appRow = byKey.get("app");
const appWithinBareSpread =
  bare === undefined || appRow === undefined ? undefined : appRow.median >= bare.worst;

const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
console.log(
  `Pulsar at ${new URL(url).host}, ${orderBytes}-byte JSON orders, ${rounds} interleaved rounds; per row: ${[...counts].map(([kind, n]) => `${kind} ${n}`).join(", ")}`,
);
for (const line of tableLines(rows, fmt)) console.log(line);
for (const [name, value] of Object.entries(ratios)) {
  if (value !== undefined) console.log(`median ${name}: ${value.toFixed(2)}`);
}
if (appWithinBareSpread !== undefined) {
  console.log(`full app's median within the bare loop's spread: ${appWithinBareSpread}`);
}
console.log("CPU per order, median (the row's process: Node, or the JVM):");
for (const r of rows) console.log(`  ${r.name}: ${median(r.cpuUsPerOrder).toFixed(2)} µs`);
for (const line of peaks.lines(rows, peakRatios)) console.log(line);
console.log(
  `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
);

const full = seconds >= 3 && rounds >= 5 && process.argv[4] === undefined;
const command = `pnpm --filter @ruststream/tooling-bench bench:pulsar ${seconds} ${rounds}${process.argv[4] === undefined ? "" : ` ${rowArg}`}${fileArg === undefined ? "" : ` ${fileArg}`}`;
const file = `results/${fileArg ?? (full ? "pulsar.json" : "pulsar-quick.json")}`;
writeFileSync(
  new URL(`../../${file}`, import.meta.url),
  `${JSON.stringify(
    {
      scenario:
        "One Pulsar 4.0 standalone broker, 512-byte JSON orders: our wire client's producer and consumer against Pulsar's Java client (same batching, same window, Shared subscription), and the full RustStream app on PulsarBroker (Shared, typed JSON handler, ack) against our bare wire-client consume loop decoding the same JSON; each Node row and round in a process of its own, its peak resident set measured (the Java rows: the long-lived JVM's over the row)",
      command,
      date: new Date().toISOString(),
      machine: { ...machine(), broker: new URL(url).host },
      load: { before: loadBefore, after: loadAfter },
      source,
      orderBytes,
      window,
      batching: { maxMessages: 1000, maxBytes: 131072, maxDelayMs: 1 },
      receiverQueueSize: 1000,
      counts: Object.fromEntries(counts),
      secondsPerRow: seconds,
      rounds,
      wallSeconds,
      rows,
      medians: ratios,
      appWithinBareSpread,
      peakRatios,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s of rounds)`);
