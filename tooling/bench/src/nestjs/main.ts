// NestJS on Kafka (issue 44): one Nest controller with an `@EventPattern` handler (ordersModule.ts)
// served by Nest's own Kafka transport (`Transport.KAFKA`, kafkajs) and by our transport strategy
// (`RustStreamServer` of @ruststream/nestjs) on @ruststream/kafka's librdkafka and kafkajs clients,
// beside our plain app on each client, draining a pre-filled topic of 512-byte JSON orders on the
// Kafka of tooling/brokers; rows interleaved over rounds, each row and round in a process of its own
// (../rows/drainRounds.ts), its rate, CPU per order and peak memory measured. Target: our strategy
// at least 3 times Nest's Kafka transport.
//
//   pnpm --filter @ruststream/tooling-bench bench:nestjs [count] [rounds] [rows] [file]
//
// rows: a comma list of rows.ts's keys (default all); file: the results' name under results/
// (default nestjs.json for count >= 100k and rounds >= 5, else nestjs-quick.json). KAFKA_BROKERS
// picks the cluster; without it tooling/brokers starts its Kafka. The Kafka bench's producer
// process (../kafka/producerProcess.ts) fills a fresh topic for every row of every round (untimed),
// and after the row checks its group's committed offsets at the end of every partition.
import { readFileSync } from "node:fs";
import rdkafka from "@confluentinc/kafka-javascript";
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { ProducerProcess } from "../kafka/producerProcess.js";
import type { Trial } from "../kafka/rawRows.js";
import { orderBytes } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { drainArgs } from "../rows/drainArgs.js";
import { runDrainBench } from "../rows/drainRounds.js";
import { rowKeys, rowName } from "./rows.js";

const args = drainArgs("nestjs", rowKeys);
// Every row known before anything starts.
for (const key of args.chosen) rowName(key);
/** Partitions of every topic, as the Kafka bench's (KAFKA_PARTITIONS changes it). */
const partitions = Number(process.env.KAFKA_PARTITIONS ?? 4);

/** A package's version, from the package.json beside its entry (Nest's exports name no package.json). */
const versionOf = (name: string) =>
  (
    JSON.parse(readFileSync(new URL("package.json", import.meta.resolve(name)), "utf8")) as {
      version: string;
    }
  ).version;
const versions = {
  nestjs: versionOf("@nestjs/microservices"),
  nestjsCore: versionOf("@nestjs/core"),
  kafkajs: versionOf("kafkajs"),
  librdkafka: rdkafka.librdkafkaVersion,
};

if (process.env.KAFKA_BROKERS === undefined) await ensureBrokers(["kafka"]);
const brokers = process.env.KAFKA_BROKERS;
if (brokers === undefined) {
  throw new Error("no Kafka: set KAFKA_BROKERS, or start tooling/brokers (pnpm brokers up kafka)");
}

const producer = await ProducerProcess.start(brokers);
let trials = 0;

async function fresh(_key: string, messages: number): Promise<Trial> {
  const topic = `bench.nestjs.${process.pid}.${trials}`;
  const group = `bench-nestjs-${process.pid}-${trials++}`;
  await producer.fill(topic, partitions, messages);
  return { brokers: brokers!, topic, group, count: messages };
}

async function finish(where: string, trial: Trial): Promise<void> {
  const finished = await producer.finish(trial.topic, trial.group);
  if (finished.lag !== 0) {
    throw new Error(
      `${where}: the group's committed offsets leave ${finished.lag} records behind (committed/end: ${finished.partitions})`,
    );
  }
}

await runDrainBench<Trial>({
  title: `NestJS ${versions.nestjsCore} (microservices ${versions.nestjs}) on Kafka at ${brokers}, kafkajs ${versions.kafkajs}, librdkafka ${versions.librdkafka}, ${orderBytes}-byte JSON orders, ${partitions} partitions`,
  scenario: `A pre-filled Kafka topic of 512-byte JSON orders (${partitions} partitions) drained by one Nest controller's @EventPattern handler on Nest's Kafka transport (kafkajs, its defaults) and on RustStreamServer (librdkafka, kafkajs), and by the plain RustStream app on each client; each order decoded and its id noted; each row and round in a process of its own, its peak resident set measured`,
  args,
  rowModule: new URL("./rows.ts", import.meta.url).href,
  rowName,
  pairs: [
    ["strategy", "nest-kafka", 3],
    ["strategy-kafkajs", "nest-kafka", 3],
    ["app", "nest-kafka"],
    ["app-kafkajs", "nest-kafka"],
    ["strategy", "app"],
    ["strategy-kafkajs", "app-kafkajs"],
  ],
  against: {
    heading: "ratios (target: our strategy at least 3 times Nest's Kafka transport)",
    bounded: false,
  },
  fresh,
  finish,
  facts: {
    source: sourceRevision(["packages/core/src", "packages/kafka/src", "packages/nestjs/src"]),
    versions,
    orderBytes,
    partitions,
  },
});
producer.stop();
