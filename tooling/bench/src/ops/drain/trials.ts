// Where the drain rows of the operations bench read from: a fresh Redis stream or Kafka topic of
// 512-byte JSON orders per row and round, filled by the broker benches' own load processes (untimed,
// outside the row's process), and every drain checked afterwards as those benches check theirs.
import { ensureBrokers } from "@ruststream/tooling-testkit";
import { ProducerProcess } from "../../kafka/producerProcess.js";
import type { Trial } from "../../kafka/rawRows.js";
import type { Drained } from "../../kafka/tally.js";
import { idSum } from "../../redis/drain/order.js";
import type { DrainTrial } from "../../redis/drain/rows.js";
import { GeneratorProcess } from "../../redis/generatorProcess.js";
import { openRaw, serverTarget } from "../../redis/target.js";
import type { DrainBroker } from "./rows.js";

/** A broker's side of the drains: fresh filled trials, the check after each, and the end. */
export interface DrainTrials {
  /** Where the drains run: host and port, never a password. */
  readonly where: string;
  /** A fresh stream or topic holding orders 0..count-1 (untimed). */
  fresh(count: number): Promise<unknown>;
  /** Throws unless the drain of `trial` decoded every order once and left nothing unsettled. */
  check(what: string, trial: unknown, drained: Drained): Promise<void>;
  /** Removes a trial whose drain is not checked (a warm-up's). */
  discard(trial: unknown): Promise<void>;
  close(): void;
}

function checkCount(what: string, count: number, drained: Drained): void {
  if (drained.messages !== count) throw new Error(`${what}: ${drained.messages} of ${count}`);
  if (drained.idSum !== idSum(count)) {
    throw new Error(`${what}: ids summed to ${drained.idSum}, not ${idSum(count)}`);
  }
}

/** REDIS_URL's server, else tooling/brokers' plain one; one stream per trial, its group at `0`. */
async function redisTrials(): Promise<DrainTrials> {
  if (process.env.REDIS_URL === undefined) await ensureBrokers(["redis"]);
  const url = process.env.REDIS_URL;
  if (url === undefined)
    throw new Error("no Redis server: set REDIS_URL, or start tooling/brokers");
  const admin = await openRaw(serverTarget(url), "admin");
  const generator = await GeneratorProcess.start(serverTarget(url));
  const group = "bench";
  let trials = 0;
  return {
    where: new URL(url).host,
    async fresh(count) {
      const key = `bench:ops-drain:${process.pid}:${trials++}`;
      await generator.run({ kind: "fill-stream-orders", key, count });
      await admin.xgroup("CREATE", key, group, "0");
      return { url, key, group, count } satisfies DrainTrial;
    },
    async check(what, input, drained) {
      const trial = input as DrainTrial;
      checkCount(what, trial.count, drained);
      const [pending] = (await admin.xpending(trial.key, group)) as [number];
      if (pending !== 0) throw new Error(`${what}: ${pending} entries left pending`);
      await admin.unlink(trial.key);
    },
    async discard(input) {
      await admin.unlink((input as DrainTrial).key);
    },
    close() {
      generator.stop();
      admin.disconnect();
    },
  };
}

/** KAFKA_BROKERS' cluster, else tooling/brokers' Kafka; a topic of 4 partitions and a group per trial. */
async function kafkaTrials(): Promise<DrainTrials> {
  if (process.env.KAFKA_BROKERS === undefined) await ensureBrokers(["kafka"]);
  const brokers = process.env.KAFKA_BROKERS;
  if (brokers === undefined)
    throw new Error("no Kafka: set KAFKA_BROKERS, or start tooling/brokers");
  const producer = await ProducerProcess.start(brokers);
  const partitions = 4;
  let trials = 0;
  return {
    where: brokers,
    async fresh(count) {
      const topic = `bench.ops-drain.${process.pid}.${trials}`;
      const group = `bench-ops-drain-${process.pid}-${trials++}`;
      await producer.fill(topic, partitions, count);
      return { brokers, topic, group, count } satisfies Trial;
    },
    async check(what, input, drained) {
      const trial = input as Trial;
      checkCount(what, trial.count, drained);
      const finished = await producer.finish(trial.topic, trial.group);
      if (finished.lag !== 0) {
        throw new Error(
          `${what}: the group's committed offsets leave ${finished.lag} records behind (committed/end: ${finished.partitions})`,
        );
      }
    },
    async discard(input) {
      const trial = input as Trial;
      await producer.finish(trial.topic, trial.group);
    },
    close() {
      producer.stop();
    },
  };
}

export function trialsOf(broker: DrainBroker): Promise<DrainTrials> {
  return broker === "redis" ? redisTrials() : kafkaTrials();
}
