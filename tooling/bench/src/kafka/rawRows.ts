// The floors the package is measured against: each client's own consume loop as a careful user
// writes it, decoding every order with JSON.parse and committing as the package's `auto` mode does.
import rdkafka from "@confluentinc/kafka-javascript";
import kafkajs from "kafkajs";
import type { Order } from "../redis/drain/order.js";
import { type Drained, Tally } from "./tally.js";

/** One row's run over a fresh topic holding `count` orders, read by a group nobody used before. */
export interface Trial {
  readonly brokers: string;
  readonly topic: string;
  readonly group: string;
  readonly count: number;
}

export type Row = (trial: Trial) => Promise<Drained>;

/**
 * How a raw librdkafka loop pulls: records per `consume` call, and librdkafka's
 * `fetch.queue.backoff.ms` (how long its fetcher waits once the local queue is over its
 * thresholds; librdkafka's default is 1000), `undefined` for the default.
 */
export interface RdkafkaPull {
  readonly consumeMax: number;
  readonly fetchBackoffMs: number | undefined;
}

/**
 * The fastest pull of the settings measured (README, "Kafka"): `consume(1000)` and a 100 ms fetch
 * back-off. The package's librdkafka engine takes the back-off and keeps `consume(256)` (its
 * `client/librdkafka/pull.ts` says why).
 */
export const fastestPull: RdkafkaPull = { consumeMax: 1000, fetchBackoffMs: 100 };
/** The raw loop the benchmark held the package against before: `consume(256)`, the default back-off. */
export const defaultPull: RdkafkaPull = { consumeMax: 256, fetchBackoffMs: undefined };
const consumeWaitMs = 100;
/**
 * kafkajs's `maxBytesPerPartition` of the fastest raw loop worth its memory (README, "Kafka"): 4 MiB
 * (kafkajs's default is 1 MiB; 8 and 16 MiB gained little more). The package's kafkajs engine's too.
 */
export const fastestKafkajsKiB = 4096;
/** kafkajs's fetch wait as the package's kafkajs engine sets it (kafkajs's own default is 5 s). */
export const kafkajsFetchWaitMs = 200;

interface TimeoutOnlyForFirst {
  setDefaultIsTimeoutOnlyForFirstMessage(set: boolean): void;
}

const settle = (start: (cb: (error: unknown) => void) => unknown) =>
  new Promise<void>((resolve, reject) => {
    start((error) => (error ? reject(error) : resolve()));
  });

/**
 * The @confluentinc/kafka-javascript consumer directly: `consume(pull.consumeMax)` in a loop,
 * `JSON.parse` of each value. `auto` as the package's auto mode commits: librdkafka stores each
 * record's offset as it hands it over and commits in the background. With `stored`, the tracked analogue: offset
 * storing off, and after each batch is handled the next offset of each partition stored by hand
 * (one `offsetsStore` call per batch), committed by the same background commit.
 */
export function rawRdkafka(stored: boolean, pull: RdkafkaPull = fastestPull): Row {
  return async ({ brokers, topic, group, count }) => {
    const consumer = new rdkafka.KafkaConsumer(
      {
        "metadata.broker.list": brokers,
        "client.id": "bench-raw",
        "group.id": group,
        "enable.auto.commit": true,
        "enable.auto.offset.store": !stored,
        ...(pull.fetchBackoffMs === undefined
          ? {}
          : { "fetch.queue.backoff.ms": pull.fetchBackoffMs }),
      },
      { "auto.offset.reset": "earliest" },
    );
    await settle((cb) => consumer.connect({ timeout: 10_000 }, cb));
    consumer.setDefaultConsumeTimeout(consumeWaitMs);
    // The wait bounds only the first record of a `consume`; the rest are what is already fetched (as
    // the package's engine sets it; the client's typings omit the method).
    (consumer as unknown as TimeoutOnlyForFirst).setDefaultIsTimeoutOnlyForFirstMessage(true);
    consumer.subscribe([topic]);
    const tally = new Tally(count);
    const next = new Map<number, number>();
    while (tally.seen < count) {
      const messages = await new Promise<rdkafka.Message[]>((resolve, reject) =>
        consumer.consume(pull.consumeMax, (error, batch) =>
          error ? reject(error) : resolve(batch),
        ),
      );
      for (const message of messages) {
        tally.add(JSON.parse(message.value!.toString("utf8")) as Order);
        if (stored) next.set(message.partition, message.offset + 1);
      }
      if (stored && next.size > 0) {
        consumer.offsetsStore(
          [...next].map(([partition, offset]) => ({ topic, partition, offset })),
        );
        next.clear();
      }
    }
    const drained = tally.drained();
    // librdkafka commits what is stored as it closes.
    await settle((cb) => consumer.disconnect(cb));
    return drained;
  };
}

/**
 * kafkajs directly: `eachBatch`, `JSON.parse` of each value, kafkajs resolving each batch's offsets
 * and committing them (its autoCommit), the fetch wait the package's kafkajs engine sets, and
 * `maxBytesPerPartition` in KiB.
 */
export function rawKafkajs(maxKiBPerPartition: number): Row {
  return async ({ brokers, topic, group, count }) => {
    const kafka = new kafkajs.Kafka({
      clientId: "bench-raw",
      brokers: brokers.split(","),
      logLevel: kafkajs.logLevel.NOTHING,
    });
    const consumer = kafka.consumer({
      groupId: group,
      maxWaitTimeInMs: kafkajsFetchWaitMs,
      maxBytesPerPartition: maxKiBPerPartition * 1024,
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const tally = new Tally(count);
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          tally.add(JSON.parse(message.value!.toString("utf8")) as Order);
        }
      },
    });
    await tally.done;
    const drained = tally.drained();
    await consumer.disconnect();
    return drained;
  };
}
