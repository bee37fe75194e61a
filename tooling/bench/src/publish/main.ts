// Publishing on every broker: the app's publish (and the broker's publisher) against the broker's
// raw client at the same concurrency, the same 512-byte payloads and partition keys, each publish
// confirmed, `depth` in flight. Rows interleave round by round (their order turning each round), so
// drift in the machine hits every row alike; one untimed warm-up of every row comes first.
//
//   pnpm --filter @ruststream/tooling-bench bench:publish [seconds] [rounds] [brokers] [depth] [least]
//
// brokers: a comma list of redis, kafka-rdkafka, kafka-kafkajs, pulsar, file, nats, rabbitmq,
// postgres (default all). depth: publishes in flight (default 500). least: the fewest messages a
// row publishes per round, and the sizing run's count (default 20,000; fewer for a broker whose
// slowest row would take minutes at the fastest row's count). REDIS_URL, KAFKA_BROKERS,
// PULSAR_URL, NATS_URL, RABBITMQ_URL and POSTGRES_URL pick the servers; without one
// tooling/brokers starts its own. RABBITMQ_AT=<git ref> adds a RabbitMQ row on the package as that
// ref had it (rabbitmqRows.ts), POSTGRES_AT=<git ref> a PostgreSQL one (postgresRows.ts).
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { sourceRevision } from "../revision.js";
import { machine, median, type RowSummary, summarize, tableLines } from "../stats.js";
import { brokerNames, rowsOf } from "./brokers.js";
import { payloadBytes } from "./message.js";
import type { PublishRow } from "./row.js";

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 5);
const brokerArg = process.argv[4] ?? brokerNames.join(",");
const depth = Number(process.argv[5] ?? 500);
const sizingCount = Number(process.argv[6] ?? 20_000);
const warmCount = Math.min(5_000, sizingCount);

const chosen = brokerArg.split(",");
const rows: PublishRow[] = [];
for (const name of chosen) rows.push(...(await rowsOf(name)));
const brokers = [...new Set(rows.map((r) => r.broker))];
const source = sourceRevision(["packages"]);
const loadBefore = loadavg();

// Warm-up, untimed: every row once, so the JIT has seen every path and every client connected once.
for (const row of rows) await row.run(warmCount, depth);
// Sizing: each broker's rows move the same count, its fastest row's rate times the seconds asked.
const counts = new Map<string, number>();
for (const row of rows) {
  const rate = (sizingCount / (await row.run(sizingCount, depth)).ms) * 1000;
  process.stderr.write(`sizing: ${row.broker} / ${row.name} ${(rate / 1000).toFixed(1)} k/s\n`);
  const count = Math.max(sizingCount, Math.round((rate * seconds) / 1000) * 1000);
  counts.set(row.broker, Math.max(counts.get(row.broker) ?? 0, count));
}
process.stderr.write(
  `messages per row: ${[...counts].map(([broker, n]) => `${broker} ${n}`).join(", ")}\n`,
);

const rates = new Map<PublishRow, number[]>();
// This process's CPU per message in microseconds: the Node side's cost of a publish (librdkafka's
// threads included), which the machine's load moves less than it moves a rate.
const cpuPerMessage = new Map<PublishRow, number[]>();
const began = performance.now();
for (let round = 0; round < rounds; round++) {
  for (const broker of brokers) {
    const own = rows.filter((r) => r.broker === broker);
    const count = counts.get(broker)!;
    for (let i = 0; i < own.length; i++) {
      const row = own[(i + round) % own.length]!;
      const timed = await row.run(count, depth);
      rates.set(row, [...(rates.get(row) ?? []), (count / timed.ms) * 1000]);
      cpuPerMessage.set(row, [...(cpuPerMessage.get(row) ?? []), (timed.cpuMs * 1000) / count]);
    }
  }
  process.stderr.write(`round ${round + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(2)})\n`);
}
const wallSeconds = (performance.now() - began) / 1000;
const loadAfter = loadavg();

const fmt = (rate: number) => `${(rate / 1e3).toFixed(1)} k/s`;
console.log(
  `${payloadBytes}-byte payloads, ${depth} publishes in flight, ${rounds} interleaved rounds, ~${seconds} s per row`,
);
const results = brokers.map((broker) => {
  const own = rows.filter((r) => r.broker === broker);
  const summaries: (RowSummary & { baseline: boolean; cpuUsPerMessage: number[] })[] = own.map(
    (r) => ({
      ...summarize(r.name, rates.get(r)!),
      baseline: r.baseline,
      cpuUsPerMessage: cpuPerMessage.get(r)!,
    }),
  );
  // Every non-baseline row over every baseline row, by medians.
  const ratios: Record<string, Record<string, number>> = {};
  for (const top of summaries.filter((s) => !s.baseline)) {
    ratios[top.name] = Object.fromEntries(
      summaries.filter((s) => s.baseline).map((b) => [b.name, top.median / b.median]),
    );
  }
  console.log(`\n${broker}: ${counts.get(broker)} messages per row`);
  for (const line of tableLines(summaries, fmt)) console.log(line);
  const cpu = summaries.map((r) => `${r.name} ${median(r.cpuUsPerMessage).toFixed(2)}`);
  console.log(`  CPU µs per message, median: ${cpu.join(", ")}`);
  for (const [name, over] of Object.entries(ratios)) {
    const parts = Object.entries(over).map(([b, ratio]) => `${ratio.toFixed(2)} of ${b}`);
    console.log(`  ${name}: ${parts.join(", ")}`);
  }
  return { broker, count: counts.get(broker)!, rows: summaries, ratios };
});
console.log(
  `load average (1/5/15 min) before ${loadBefore.map((l) => l.toFixed(2)).join("/")}, after ${loadAfter.map((l) => l.toFixed(2)).join("/")}`,
);

const full = seconds >= 2 && rounds >= 5 && process.argv[4] === undefined;
const command = `pnpm --filter @ruststream/tooling-bench bench:publish ${seconds} ${rounds}${process.argv[4] === undefined ? "" : ` ${brokerArg}`}${process.argv[5] === undefined ? "" : ` ${depth}`}${process.argv[6] === undefined ? "" : ` ${sizingCount}`}`;
const file = `results/${full ? "publish" : "publish-quick"}.json`;
writeFileSync(
  new URL(`../../${file}`, import.meta.url),
  `${JSON.stringify(
    {
      scenario:
        "Publishing, each publish confirmed, `depth` in flight: the app's publish and the broker's publisher against each broker's raw client, same payloads and partition keys",
      command,
      date: new Date().toISOString(),
      machine: machine(),
      load: { before: loadBefore, after: loadAfter },
      source,
      payloadBytes,
      depth,
      secondsPerRow: seconds,
      rounds,
      wallSeconds,
      brokers: results,
    },
    null,
    2,
  )}\n`,
);
console.log(`\nresults written to tooling/bench/${file} (${wallSeconds.toFixed(0)} s of rounds)`);
