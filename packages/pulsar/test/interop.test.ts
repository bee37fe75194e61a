import {
  bytes as bytesCodec,
  type HandlerContext,
  HeaderMap,
  headerNames,
  RustStream,
  readDeadLetterOrigin,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { headerOf, headersAsText, sortedByName } from "@ruststream/tooling-interop/text";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { PulsarBroker, type PulsarDelivery, PulsarShared } from "../src/index.js";
import { eventually, serviceUrl } from "./env.js";

// RustStream's own Pulsar broker (ruststream-pulsar 0.7.1, tooling/interop's `serve`) beside ours on
// the real broker, on Shared subscriptions: the same messages both ways on one topic (properties as
// headers, the partition key), one subscription shared by a Rust and a TypeScript consumer, and the
// broker's redelivery count moving a message that always fails to one dead letter, whose origin
// properties each side reads from the other.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});

const live = () => new PulsarBroker({ url: serviceUrl() });

/** A message as sent: its payload, its properties in order, its partition key. */
interface Sent {
  readonly payload: Uint8Array;
  readonly headers: readonly (readonly [string, string])[];
  readonly key: string | undefined;
}

const messages: readonly Sent[] = [
  {
    payload: bytes('{"order":1}'),
    headers: [
      ["content-type", "application/json"],
      ["x-text", "ünïcødé ✓"],
      ["x-empty", ""],
      [headerNames.retryCount, "2"],
    ],
    key: "order-1",
  },
  { payload: Uint8Array.from([0, 1, 2, 254, 255]), headers: [["x-trace", "t-9"]], key: "ключ" },
  { payload: new Uint8Array(), headers: [], key: undefined },
];

async function tsPublish(topic: string, sent: readonly Sent[]): Promise<void> {
  const connected = await live().connect();
  try {
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (const m of sent) {
      await publisher.publish({
        name: topic,
        payload: m.payload,
        headers: new HeaderMap(m.headers.map(([n, v]) => [n, v] as [string, string])),
        ...(m.key === undefined ? {} : { partitionKey: bytes(m.key) }),
      });
    }
  } finally {
    await connected.shutdown();
  }
}

async function rustPublish(service: RustService, topic: string, sent: readonly Sent[]) {
  await service.publish(
    ...sent.map((m) => ({
      key: topic,
      payload: m.payload,
      headers: m.headers,
      ...(m.key === undefined ? {} : { partitionKey: m.key }),
    })),
  );
}

/** `count` messages of `topic` from its beginning, through a fresh Shared subscription of ours. */
async function tsRead(topic: string, count: number): Promise<PulsarDelivery[]> {
  const connected = await live().connect();
  try {
    const sub = await connected.subscribe(
      new PulsarShared(topic, {
        subscription: `reader-${count}-${Date.now()}`,
        initialPosition: "earliest",
        retryTopic: false,
      }),
    );
    const got: PulsarDelivery[] = [];
    while (got.length < count) {
      const next = await Promise.race([
        sub.next(),
        new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 20_000)),
      ]);
      if (next === "timeout") throw new Error(`${topic}: ${got.length} of ${count} messages`);
      if (next.done) throw new Error(`${topic} ended after ${got.length} messages`);
      got.push(next.value as PulsarDelivery);
      await next.value.ack();
    }
    await sub.close();
    return got;
  } finally {
    await connected.shutdown();
  }
}

/** A Rust service on a Shared subscription of `topic`. */
function rustConsumer(
  topic: string,
  subscription: string,
  options: { maxAttempts?: number; deadLetter?: string } = {},
) {
  return RustService.start({
    transport: "pulsar",
    url: serviceUrl(),
    consume: {
      key: topic,
      group: subscription,
      max_attempts: options.maxAttempts ?? 3,
      dead_letter: options.deadLetter ?? `${topic}-${subscription}-DLQ`,
    },
  });
}

interopSuite(
  "RustStream's Pulsar broker beside ours",
  () => {
    it("both directions on one topic: payload, every property as a header, the partition key, the retry count, the content type", async () => {
      const topic = uniqueName("interop-wire");
      const rust = await rustConsumer(topic, "rust");
      await tsPublish(topic, messages);
      await rust.waitForDeliveries(messages.length);
      // Ours as the crate reads it: the properties in the order we wrote them, then the message's
      // partition key as the crate's partition-key header.
      expect(
        rust.deliveries.map((d) => ({
          payload: Buffer.from(d.payload),
          headers: headersAsText(d.headers),
          key: d.partitionKey?.toString() ?? null,
          retryCount: d.retryCount,
          contentType: d.contentType,
        })),
      ).toEqual(
        messages.map((m) => ({
          payload: Buffer.from(m.payload),
          headers: [...m.headers, ...(m.key === undefined ? [] : [["partition-key", m.key]])],
          key: m.key ?? null,
          retryCount: m === messages[0] ? 2 : 0,
          contentType: m === messages[0] ? "application/json" : null,
        })),
      );

      // The other way, onto the same topic. The crate keeps properties in a hash map, so their
      // order is not part of the contract: compared sorted.
      await rustPublish(rust, topic, messages);
      await rust.waitForDeliveries(messages.length * 2);
      for (const [i, m] of messages.entries()) {
        const own = rust.deliveries[messages.length + i]!;
        expect(Buffer.from(own.payload)).toEqual(Buffer.from(m.payload));
        expect(sortedByName(headersAsText(own.headers))).toEqual(
          sortedByName(headersAsText(rust.deliveries[i]!.headers)),
        );
      }
      const all = await tsRead(topic, messages.length * 2);
      for (const [i, m] of messages.entries()) {
        for (const read of [all[i]!, all[messages.length + i]!]) {
          expect(Buffer.from(read.payload)).toEqual(Buffer.from(m.payload));
          // The key is the message's partition key, never a property.
          expect(sortedByName(headersAsText(read.headers))).toEqual(sortedByName(m.headers));
          expect(read.partitionKey === undefined ? undefined : text(read.partitionKey)).toBe(m.key);
        }
      }
    });

    it("one Shared subscription, a Rust and a TypeScript consumer: every message handled once, none lost, whichever side published it", async () => {
      const topic = uniqueName("interop-shared");
      const handled: string[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(new PulsarShared(topic, { subscription: "shared" }), {
          codec: bytesCodec,
        }).handle((payload: Uint8Array) => {
          handled.push(text(payload));
        });
      });
      t = await TestApp.startLive(app);
      const rust = await rustConsumer(topic, "shared");
      const fromTs = [...Array(40).keys()].map((i) => `ts-${i}`);
      await tsPublish(
        topic,
        fromTs.map((p) => ({ payload: bytes(p), headers: [], key: `key-${p}` })),
      );
      const fromRust = [...Array(40).keys()].map((i) => `rust-${i}`);
      await rustPublish(
        rust,
        topic,
        fromRust.map((p) => ({ payload: bytes(p), headers: [], key: `key-${p}` })),
      );
      const all = [...fromTs, ...fromRust];
      const seen = () => [...handled, ...rust.deliveries.map((d) => text(d.payload))];
      await eventually(() => seen().length >= all.length, 30_000, "every message handled");
      await t.settle();
      expect(seen().sort()).toEqual([...all].sort());
      expect(handled.length).toBeGreaterThan(0);
      expect(rust.deliveries.length).toBeGreaterThan(0);
    });

    it("a message that fails in Rust: the broker counts the redeliveries, the client moves it to the dead letter with Pulsar's origin properties, ours reads them", async () => {
      const topic = uniqueName("interop-dlq-r");
      const dlq = `${topic}-rust-DLQ`;
      const job = '{"job":7}';
      const rust = await rustConsumer(topic, "rust", { maxAttempts: 3, deadLetter: dlq });
      await rust.failOn([job]);
      await tsPublish(topic, [
        { payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-7" },
      ]);
      const [dead] = await tsRead(dlq, 1);
      // Three handler calls, then the client moved it without a fourth. The crate hands the
      // runtime no redelivery count (the client keeps it), so the runtime's attempt reads the
      // retry-count header alone: 1 each time.
      expect(rust.deliveries.map((d) => [d.attempt, d.retryCount, d.outcome])).toEqual([
        [1, 0, "retry"],
        [1, 0, "retry"],
        [1, 0, "retry"],
      ]);
      expect(text(dead!.payload)).toBe(job);
      expect(text(dead!.partitionKey!)).toBe("job-7");
      expect(dead!.headers.getString("x-trace")).toBe("t-9");
      // The client names the topic as its consumer was given it (ours and Java's write the full
      // name); the message id is ledger:entry:partition, with the batch index where it has one.
      expect(dead!.headers.getString("real_topic")).toBe(topic);
      expect(dead!.headers.getString("origin_message_id")).toMatch(/^\d+:\d+:-1(:\d+)?$/);
      // Neither a retry count nor core's origin: the client wrote Pulsar's two properties only.
      expect(dead!.headers.has(headerNames.retryCount)).toBe(false);
      expect(readDeadLetterOrigin(dead!.headers)).toBeUndefined();
    });

    it("a message that fails in TypeScript: our dead letter carries Pulsar's origin properties and core's, the Rust handler reads both", async () => {
      const topic = uniqueName("interop-dlq-t");
      const dlq = `${topic}-ts-DLQ`;
      const job = '{"job":8}';
      const attempts: number[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(new PulsarShared(topic, { subscription: "ts" }), { codec: bytesCodec })
          .maxAttempts(3)
          .deadLetter(dlq)
          .handle((_payload: Uint8Array, ctx: HandlerContext) => {
            attempts.push(ctx.attempt);
            return retry();
          });
      });
      t = await TestApp.startLive(app);
      const reader = await rustConsumer(dlq, "rust-dlq");
      await tsPublish(topic, [
        { payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-8" },
      ]);
      await reader.waitForDeliveries(1);
      await t.settle();
      // The broker's count: redelivery 0, 1, 2 are attempts 1, 2, 3.
      expect(attempts).toEqual([1, 2, 3]);
      const [read] = reader.deliveries;
      expect(text(read!.payload)).toBe(job);
      expect(read!.partitionKey?.toString()).toBe("job-8");
      expect(headerOf(read!, "x-trace")).toBe("t-9");
      expect(headerOf(read!, "real_topic")).toBe(`persistent://public/default/${topic}`);
      expect(headerOf(read!, "origin_message_id")).toMatch(/^\d+:\d+:-1:-?\d+$/);
      expect(headerOf(read!, "x-ruststream-dlq-source")).toBe(topic);
      expect(headerOf(read!, "x-ruststream-dlq-reason")).toBe("max-attempts");
      // The three deliveries it had, which the Rust handler reads as its retry count.
      expect(read!.retryCount).toBe(3);
    });

    it("one Shared subscription, both consumers failing one message: the broker's count spans both, three handler calls in all, one dead letter", async () => {
      const topic = uniqueName("interop-dlq-shared");
      const dlq = `${topic}-shared-DLQ`;
      const job = '{"job":9}';
      const attempts: number[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(new PulsarShared(topic, { subscription: "shared" }), { codec: bytesCodec })
          .maxAttempts(3)
          .deadLetter(dlq)
          .handle((payload: Uint8Array, ctx: HandlerContext) => {
            if (text(payload) !== job) return undefined;
            attempts.push(ctx.attempt);
            return retry();
          });
      });
      t = await TestApp.startLive(app);
      const rust = await rustConsumer(topic, "shared", { maxAttempts: 3, deadLetter: dlq });
      await rust.failOn([job]);
      // Others around it, so the broker hands the consumers work in turn.
      const others = [...Array(10).keys()].map((i) => `other-${i}`);
      await tsPublish(topic, [
        ...others.slice(0, 5).map((p) => ({ payload: bytes(p), headers: [], key: p })),
        { payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-9" },
        ...others.slice(5).map((p) => ({ payload: bytes(p), headers: [], key: p })),
      ]);
      const [dead] = await tsRead(dlq, 1);
      await t.settle();
      const rustCalls = rust.deliveries.filter((d) => text(d.payload) === job);
      expect(attempts.length + rustCalls.length).toBe(3);
      // Both took part: the broker's count crossed from one consumer to the other.
      expect(attempts.length, "handler calls in TypeScript").toBeGreaterThan(0);
      expect(rustCalls.length, "handler calls in Rust").toBeGreaterThan(0);
      // Ours reads the broker's count wherever the message went before.
      for (const attempt of attempts) expect([1, 2, 3]).toContain(attempt);
      expect(new Set(attempts).size).toBe(attempts.length);
      expect(text(dead!.payload)).toBe(job);
      expect(text(dead!.partitionKey!)).toBe("job-9");
      expect(dead!.headers.getString("x-trace")).toBe("t-9");
      // Whichever side moved it: the crate's client writes the short name, ours the full one.
      expect([topic, `persistent://public/default/${topic}`]).toContain(
        dead!.headers.getString("real_topic"),
      );
    });
  },
  { timeout: 120_000 },
);
