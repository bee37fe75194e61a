import {
  bytes as bytesCodec,
  type HandlerContext,
  HeaderMap,
  headerNames,
  RustStream,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { headerOf } from "@ruststream/tooling-interop/text";
import { bytes, requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { KafkaBroker, KafkaTopic, kafkaHeaders } from "../src/index.js";

// RustStream's own Kafka broker (ruststream-rdkafka 0.7.1, tooling/interop's `serve`) beside ours
// on the real cluster: the same records both ways on one topic, one consumer group shared by a Rust
// and a TypeScript member, and retry chains whose dead letters each side reads from the other.

const brokers = () => requireEnv("KAFKA_BROKERS");
let t: TestApp | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});

/** A record as sent: its value, its headers in order, its key. */
interface Sent {
  readonly payload: Uint8Array;
  readonly headers: readonly (readonly [string, Uint8Array])[];
  readonly key: Uint8Array | undefined;
}

const raw = (...values: number[]) => Uint8Array.from(values);

/** Every header kind a Kafka record carries: text, binary, empty, the content type, a retry count. */
const records: readonly Sent[] = [
  {
    payload: bytes('{"order":1}'),
    headers: [
      ["content-type", bytes("application/json")],
      ["x-binary", raw(0, 255, 10, 13, 0x80)],
      ["x-empty", new Uint8Array()],
      [headerNames.retryCount, bytes("2")],
    ],
    key: bytes("order-1"),
  },
  {
    payload: raw(0, 1, 2, 254, 255),
    headers: [["x-trace", bytes("t-9")]],
    key: raw(0xff, 0, 0x41),
  },
  { payload: new Uint8Array(), headers: [], key: undefined },
];

async function tsPublish(topic: string, sent: readonly Sent[]): Promise<void> {
  const connected = await new KafkaBroker({ brokers: brokers() }).connect();
  try {
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (const r of sent) {
      await publisher.publish({
        name: topic,
        payload: r.payload,
        headers: new HeaderMap(r.headers.map(([n, v]) => [n, v] as [string, Uint8Array])),
        ...(r.key === undefined ? {} : { partitionKey: r.key }),
      });
    }
  } finally {
    await connected.shutdown();
  }
}

async function rustPublish(service: RustService, topic: string, sent: readonly Sent[]) {
  await service.publish(
    ...sent.map((r) => ({
      key: topic,
      payload: r.payload,
      headers: r.headers,
      ...(r.key === undefined ? {} : { partitionKey: r.key }),
    })),
  );
}

interface Read {
  readonly payload: Uint8Array;
  readonly headers: readonly (readonly [string, Uint8Array])[];
  readonly key: Uint8Array | undefined;
  readonly partition: number;
  readonly offset: bigint;
}

/** The first `count` records of `topic`, read by a fresh TypeScript group from the beginning. */
async function tsRead(topic: string, count: number): Promise<Read[]> {
  const connected = await new KafkaBroker({ brokers: brokers() }).connect();
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(topic, { group: uniqueName("reader"), start: "earliest" }),
    );
    const out: Read[] = [];
    while (out.length < count) {
      const next = await subscription.next();
      if (next.done) throw new Error(`${topic} ended after ${out.length} records`);
      const d = next.value;
      out.push({
        payload: d.payload,
        headers: [...d.headers],
        key: d.partitionKey,
        partition: d.partition,
        offset: d.offset,
      });
    }
    return out;
  } finally {
    await connected.shutdown();
  }
}

const buf = (value: Uint8Array) => Buffer.from(value);
const pairs = (headers: Iterable<readonly [string, Uint8Array]>) =>
  [...headers].map(([n, v]) => [n, buf(v)]);

/** A Rust service reading `topic` in `group` from the beginning (tracked commits). */
function rustConsumer(
  topic: string,
  group: string,
  options: { consumer?: string; maxAttempts?: number; deadLetter?: string } = {},
) {
  return RustService.start({
    transport: "kafka",
    url: brokers(),
    consume: {
      key: topic,
      group,
      consumer: options.consumer ?? "rust-1",
      max_attempts: options.maxAttempts ?? 3,
      dead_letter: options.deadLetter ?? `${topic}.dlq`,
    },
  });
}

async function eventually(what: string, condition: () => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await sleep(50);
  }
}

interopSuite(
  "RustStream's Kafka broker beside ours",
  () => {
    it("both directions on one topic: payload, every header byte for byte, the record key, the retry count, the content type", async () => {
      const topic = uniqueName("interop-wire");
      await tsPublish(topic, records);
      const rust = await rustConsumer(topic, uniqueName("rust"));
      await rust.waitForDeliveries(records.length);
      // What ours wrote, as the crate reads it: the headers in order, then the record key mirrored
      // into the crate's kafka-partition-key header (absent without a key).
      expect(
        rust.deliveries.map((d) => ({
          payload: buf(d.payload),
          headers: d.headers,
          key: d.partitionKey,
          retryCount: d.retryCount,
          attempt: d.attempt,
          contentType: d.contentType,
        })),
      ).toEqual(
        records.map((r) => ({
          payload: buf(r.payload),
          headers: [
            ...pairs(r.headers),
            ...(r.key === undefined ? [] : [["kafka-partition-key", buf(r.key)]]),
          ],
          key: r.key === undefined ? null : buf(r.key),
          retryCount: r === records[0] ? 2 : 0,
          attempt: r === records[0] ? 3 : 1,
          contentType: r === records[0] ? "application/json" : null,
        })),
      );

      // The other way, onto the same topic: the crate's publisher writes the same records.
      await rustPublish(rust, topic, records);
      const all = await tsRead(topic, records.length * 2);
      const ours = all.slice(0, records.length);
      const theirs = all.slice(records.length);
      for (const [i, r] of records.entries()) {
        for (const read of [ours[i]!, theirs[i]!]) {
          expect(buf(read.payload)).toEqual(buf(r.payload));
          // The key is the record key, never a header of its own.
          expect(pairs(read.headers)).toEqual(pairs(r.headers));
          expect(read.key === undefined ? undefined : buf(read.key)).toEqual(
            r.key === undefined ? undefined : buf(r.key),
          );
        }
      }
      // And the Rust consumer reads its own records as it read ours.
      await rust.waitForDeliveries(records.length * 2);
      expect(rust.deliveries.slice(records.length)).toEqual(
        rust.deliveries.slice(0, records.length),
      );
    });

    it("one consumer group, a Rust and a TypeScript member: every record handled once, none lost, whichever side published it", async () => {
      const topic = uniqueName("interop-group");
      const group = uniqueName("shared");
      const handled: string[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
        new KafkaBroker({ brokers: brokers() }),
        (b) => {
          b.subscriber(
            new KafkaTopic(topic, {
              group,
              commit: "tracked",
              start: "earliest",
              create: { partitions: 4 },
            }),
            { codec: bytesCodec },
          ).handle((payload: Uint8Array) => {
            handled.push(text(payload));
          });
        },
      );
      t = await TestApp.startLive(app);
      // The Rust member's join rebalances the group; it reports ready once it holds its partitions.
      const rust = await rustConsumer(topic, group);
      const fromTs = [...Array(40).keys()].map((i) => `ts-${i}`);
      await tsPublish(
        topic,
        fromTs.map((p) => ({ payload: bytes(p), headers: [], key: bytes(`key-${p}`) })),
      );
      const fromRust = [...Array(40).keys()].map((i) => `rust-${i}`);
      await rustPublish(
        rust,
        topic,
        fromRust.map((p) => ({ payload: bytes(p), headers: [], key: bytes(`key-${p}`) })),
      );
      const all = [...fromTs, ...fromRust];
      const seen = () => [...handled, ...rust.deliveries.map((d) => text(d.payload))];
      await eventually("every record handled", () => seen().length >= all.length);
      await t.settle();
      expect(seen().sort()).toEqual([...all].sort());
      // Range assignment splits the four partitions two and two, and the keys cover all four.
      expect(handled.length).toBeGreaterThan(0);
      expect(rust.deliveries.length).toBeGreaterThan(0);
      expect(rust.deliveries.every((d) => d.outcome === "ack")).toBe(true);
    });

    it("a retry chain from Rust to TypeScript: attempts 1, 2 | 3, 4, the count carried by RustStream's dead letter, our origin read by both", async () => {
      const t1 = uniqueName("chain-r2t");
      const t2 = `${t1}.dlq`;
      const t3 = `${t2}.dlq`;
      const job = '{"job":7}';
      const rust = await rustConsumer(t1, uniqueName("rust"), { maxAttempts: 2, deadLetter: t2 });
      await rust.failOn([job]);
      await tsPublish(t1, [
        { payload: bytes(job), headers: [["x-trace", bytes("t-9")]], key: bytes("job-7") },
      ]);
      await rust.waitForDeliveries(2);
      expect(rust.deliveries.map((d) => [d.attempt, d.retryCount, d.outcome])).toEqual([
        [1, 0, "retry"],
        [2, 1, "retry"],
      ]);
      // The runtime's copies on the topic, then its dead letter: as the delivery arrived, the
      // retry count raised to the deliveries made, no origin.
      const [dead] = await tsRead(t2, 1);
      const deadHeaders = new HeaderMap(
        dead!.headers.map(([n, v]) => [n, v] as [string, Uint8Array]),
      );
      expect(text(dead!.payload)).toBe(job);
      expect(deadHeaders.getString(headerNames.retryCount)).toBe("2");
      expect(deadHeaders.getString("x-trace")).toBe("t-9");
      expect(deadHeaders.has(kafkaHeaders.deadLetterTopic)).toBe(false);
      expect(text(dead!.key!)).toBe("job-7");

      const attempts: number[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
        new KafkaBroker({ brokers: brokers() }),
        (b) => {
          b.subscriber(
            new KafkaTopic(t2, { group: uniqueName("ts"), commit: "tracked", start: "earliest" }),
            {
              codec: bytesCodec,
            },
          )
            .maxAttempts(4)
            .deadLetter(t3)
            .handle((_payload: Uint8Array, ctx: HandlerContext) => {
              attempts.push(ctx.attempt);
              return retry();
            });
        },
      );
      t = await TestApp.startLive(app);
      const reader = await rustConsumer(t3, uniqueName("rust-dlq"), { consumer: "rust-dlq" });
      await reader.waitForDeliveries(1);
      await t.settle();
      // The count the Rust service left is where ours goes on from.
      expect(attempts).toEqual([3, 4]);
      const [read] = reader.deliveries;
      expect(text(read!.payload)).toBe(job);
      // Our dead letter counts every delivery, Rust's two and ours, as RustStream's counts them.
      expect(read!.retryCount).toBe(4);
      expect(read!.partitionKey?.toString()).toBe("job-7");
      expect(headerOf(read!, "x-trace")).toBe("t-9");
      // Our dead letter's origin under the crate's Kafka names, read by the Rust handler.
      expect(headerOf(read!, kafkaHeaders.deadLetterTopic)).toBe(t2);
      expect(headerOf(read!, kafkaHeaders.deadLetterPartition)).toBe("0");
      expect(headerOf(read!, kafkaHeaders.deadLetterOffset)).toBe(String(dead!.offset));
      expect(headerOf(read!, kafkaHeaders.deadLetterReason)).toBe("max-attempts");
      const [ours] = await tsRead(t3, 1);
      expect(pairs(ours!.headers)).toEqual(
        read!.headers.filter(([n]) => n !== "kafka-partition-key"),
      );
    });

    it("a retry chain from TypeScript to Rust: attempts 1, 2 | 3, 4, the count carried by our dead letter, our origin carried on by RustStream's dead letter", async () => {
      const t1 = uniqueName("chain-t2r");
      const t2 = `${t1}.dlq`;
      const t3 = `${t2}.dlq`;
      const job = '{"job":8}';
      const attempts: number[] = [];
      // `auto`: a retry is a copy on the topic carrying the count (a requeue is unsupported there).
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
        new KafkaBroker({ brokers: brokers() }),
        (b) => {
          b.subscriber(
            new KafkaTopic(t1, { group: uniqueName("ts"), commit: "auto", start: "earliest" }),
            {
              codec: bytesCodec,
            },
          )
            .maxAttempts(2)
            .deadLetter(t2)
            .handle((_payload: Uint8Array, ctx: HandlerContext) => {
              attempts.push(ctx.attempt);
              return retry();
            });
        },
      );
      t = await TestApp.startLive(app);
      await tsPublish(t1, [
        { payload: bytes(job), headers: [["x-trace", bytes("t-9")]], key: bytes("job-8") },
      ]);
      const rust = await rustConsumer(t2, uniqueName("rust"), { maxAttempts: 4, deadLetter: t3 });
      await rust.failOn([job]);
      await rust.waitForDeliveries(2);
      const [dead] = await tsRead(t3, 1);
      expect(attempts).toEqual([1, 2]);
      // Our dead letter carried the deliveries made (2), as RustStream's does: the Rust side goes
      // on from there, and the cap of 4 holds across both languages.
      expect(rust.deliveries.map((d) => [d.attempt, d.retryCount, d.outcome])).toEqual([
        [3, 2, "retry"],
        [4, 3, "retry"],
      ]);
      // Our dead letter's origin, read by the Rust handler on every delivery: the second record
      // of the first topic (the copy that arrived for attempt 2).
      for (const d of rust.deliveries) {
        expect(headerOf(d, kafkaHeaders.deadLetterTopic)).toBe(t1);
        expect(headerOf(d, kafkaHeaders.deadLetterPartition)).toBe("0");
        expect(headerOf(d, kafkaHeaders.deadLetterOffset)).toBe("1");
        expect(headerOf(d, kafkaHeaders.deadLetterReason)).toBe("max-attempts");
        expect(d.partitionKey?.toString()).toBe("job-8");
      }
      // RustStream's dead letter: the delivery as it arrived, our origin headers carried on
      // unchanged (they still name the first hop), the count raised to the deliveries made.
      const deadHeaders = new HeaderMap(
        dead!.headers.map(([n, v]) => [n, v] as [string, Uint8Array]),
      );
      expect(text(dead!.payload)).toBe(job);
      expect(text(dead!.key!)).toBe("job-8");
      expect(deadHeaders.getString(headerNames.retryCount)).toBe("4");
      expect(deadHeaders.getString("x-trace")).toBe("t-9");
      expect(deadHeaders.getString(kafkaHeaders.deadLetterTopic)).toBe(t1);
      expect(deadHeaders.getString(kafkaHeaders.deadLetterOffset)).toBe("1");
    });
  },
  { timeout: 120_000 },
);
