import {
  bytes as bytesCodec,
  type HandlerContext,
  HeaderMap,
  headerNames,
  RustStream,
  retry,
  retryAfter,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { headerOf, headersAsText, sortedByName } from "@ruststream/tooling-interop/text";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { RabbitBroker, RabbitPublish, RabbitQueue, RabbitQuorumQueue } from "../src/index.js";

// RustStream's own RabbitMQ broker (ruststream-lapin 0.7.2, tooling/interop's `serve`) beside ours
// on the real node: the same messages both ways through the default exchange (headers, properties,
// `amqp-partition-key`, the retry count), a quorum queue's delivery limit moving a message that
// always fails to the other side's reader, one quorum queue declared by both, delayed retries
// crossing both ways (the crate's `<queue>.retry` beside our `<queue>.wait.<ms>`), a classic
// queue's runtime copies crossing, and requests over direct reply-to answered across.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});

const url = () => requireEnv("RABBITMQ_URL");
const live = () => new RabbitBroker({ url: url(), declare: true });

/** A message as sent: its payload, its headers in order, its partition key. */
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
      [headerNames.retryCount, "2"],
    ],
    key: "order-1",
  },
  { payload: Uint8Array.from([0, 1, 2, 254, 255]), headers: [["x-trace", "t-9"]], key: "ключ" },
  { payload: new Uint8Array(), headers: [], key: undefined },
];

async function tsPublish(queue: string, sent: readonly Sent[]) {
  const connected = await live().connect();
  try {
    const publisher = await new RabbitPublish().pair(connected);
    for (const m of sent) {
      await publisher.publish({
        name: queue,
        payload: m.payload,
        headers: new HeaderMap(m.headers),
        ...(m.key === undefined ? {} : { partitionKey: bytes(m.key) }),
      });
    }
  } finally {
    await connected.shutdown();
  }
}

async function rustPublish(service: RustService, queue: string, sent: readonly Sent[]) {
  await service.publish(
    ...sent.map((m) => ({
      key: queue,
      payload: m.payload,
      headers: m.headers,
      ...(m.key === undefined ? {} : { partitionKey: m.key }),
    })),
  );
}

/** What one of our handlers saw. */
interface Seen {
  readonly payload: string;
  readonly headers: [string, string][];
  readonly key: string | undefined;
  readonly attempt: number;
}

function seenOf(payload: Uint8Array, ctx: HandlerContext): Seen {
  return {
    payload: Buffer.from(payload).toString("base64"),
    headers: [...ctx.headers.entries()].map(([n, v]) => [n, Buffer.from(v).toString()]),
    key: ctx.delivery.partitionKey === undefined ? undefined : text(ctx.delivery.partitionKey),
    attempt: ctx.attempt,
  };
}

/** An app of ours on `source`, recording every delivery; `fail` makes it retry that payload. */
async function tsConsumer(
  source: RabbitQueue | RabbitQuorumQueue,
  seen: Seen[],
  options: { fail?: string; deadLetter?: string } = {},
) {
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
    const sub = b.subscriber(source, { codec: bytesCodec });
    const capped =
      options.deadLetter === undefined ? sub : sub.maxAttempts(3).deadLetter(options.deadLetter);
    capped.handle((payload: Uint8Array, ctx: HandlerContext) => {
      seen.push(seenOf(payload, ctx));
      return text(payload) === options.fail ? retry() : undefined;
    });
  });
  t = await TestApp.startLive(app);
}

function rustConsumer(
  queue: string,
  options: {
    quorum?: boolean;
    maxAttempts?: number;
    deadLetter?: string;
    reply?: boolean;
    delay?: boolean;
    prefetch?: number;
  } = {},
) {
  return RustService.start({
    transport: "rabbitmq",
    url: url(),
    consume: {
      key: queue,
      max_attempts: options.maxAttempts ?? 3,
      dead_letter: options.deadLetter ?? `${queue}-dlq`,
      quorum: options.quorum ?? false,
      ...(options.reply === undefined ? {} : { reply: options.reply }),
      ...(options.delay === undefined ? {} : { delay: options.delay }),
      ...(options.prefetch === undefined ? {} : { prefetch: options.prefetch }),
    },
  });
}

const withKey = (m: Sent) =>
  sortedByName([
    ...m.headers,
    ...(m.key === undefined ? [] : [["amqp-partition-key", m.key] as const]),
  ]);

interopSuite(
  "RustStream's RabbitMQ broker beside ours",
  () => {
    it("classic queues both ways: payload, every header and property, the partition key as amqp-partition-key, the retry count as the attempt", async () => {
      const toRust = uniqueName("interop-classic-r");
      const toTs = uniqueName("interop-classic-t");
      const rust = await rustConsumer(toRust);
      await tsPublish(toRust, messages);
      await rust.waitForDeliveries(messages.length);
      // The crate reads properties and the header table into one map, so the order is not part
      // of the contract: compared sorted.
      expect(
        rust.deliveries.map((d) => ({
          payload: Buffer.from(d.payload),
          headers: sortedByName(headersAsText(d.headers)),
          key: d.partitionKey?.toString() ?? null,
          retryCount: d.retryCount,
          attempt: d.attempt,
          contentType: d.contentType,
        })),
      ).toEqual(
        messages.map((m, i) => ({
          payload: Buffer.from(m.payload),
          headers: withKey(m),
          key: m.key ?? null,
          retryCount: i === 0 ? 2 : 0,
          attempt: i === 0 ? 3 : 1,
          contentType: i === 0 ? "application/json" : null,
        })),
      );

      const seen: Seen[] = [];
      await tsConsumer(new RabbitQueue(toTs), seen);
      await rustPublish(rust, toTs, messages);
      await t!.settle();
      await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(messages.length);
      for (const [i, m] of messages.entries()) {
        expect(seen[i]!.payload).toBe(Buffer.from(m.payload).toString("base64"));
        expect(sortedByName(seen[i]!.headers)).toEqual(withKey(m));
        expect(seen[i]!.key).toBe(m.key);
        expect(seen[i]!.attempt).toBe(i === 0 ? 3 : 1);
      }
    });

    it("a quorum queue of the crate's, a message that always fails: the server counts, moves it after three deliveries to a dead-letter queue of ours, with x-death", async () => {
      const queue = uniqueName("interop-quorum-r");
      const dlq = `${queue}-dlq`;
      const job = '{"job":7}';
      // Our reader declares the dead-letter queue (a quorum queue of no other arguments), so the
      // server has somewhere to move it.
      const seen: Seen[] = [];
      await tsConsumer(new RabbitQuorumQueue(dlq), seen);
      const rust = await rustConsumer(queue, { quorum: true, maxAttempts: 3, deadLetter: dlq });
      await rust.failOn([job]);
      await tsPublish(queue, [
        { payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-7" },
      ]);
      await expect.poll(() => seen.length, { timeout: 20_000 }).toBe(1);
      expect(rust.deliveries.map((d) => d.outcome)).toEqual(["retry", "retry", "retry"]);
      const [dead] = seen;
      expect(Buffer.from(dead!.payload, "base64").toString()).toBe(job);
      expect(dead!.key).toBe("job-7");
      const deadHeaders = new Map(dead!.headers);
      expect(deadHeaders.get("x-trace")).toBe("t-9");
      // The server's record of the move, which ours shows as JSON.
      const death = JSON.parse(deadHeaders.get("x-death")!) as { queue: string; reason: string }[];
      expect(death[0]).toMatchObject({ queue, reason: "delivery_limit" });
    });

    it("a quorum queue of ours, a message that always fails: the server moves it to the dead letter, which the crate reads", async () => {
      const queue = uniqueName("interop-quorum-t");
      const dlq = `${queue}-dlq`;
      const job = '{"job":8}';
      const seen: Seen[] = [];
      await tsConsumer(new RabbitQuorumQueue(queue), seen, { fail: job, deadLetter: dlq });
      // The dead-letter queue ours declared, read by the crate without a cap of its own, so it
      // declares the same queue: a quorum queue of no other arguments.
      const reader = await rustConsumer(dlq, { quorum: true, maxAttempts: 0 });
      await tsPublish(queue, [
        { payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-8" },
      ]);
      await reader.waitForDeliveries(1);
      expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
      const [read] = reader.deliveries;
      expect(text(read!.payload)).toBe(job);
      expect(read!.partitionKey?.toString()).toBe("job-8");
      expect(headerOf(read!, "x-trace")).toBe("t-9");
      // The crate keeps string and byte values of the header table only: the server's x-death (a
      // table) and x-delivery-count (a number) are not in its map.
      expect(headerOf(read!, "x-death")).toBeNull();
    });

    it("one quorum queue, the cap declared by both: the crate's and our declarations are the same queue, and the server moves a message after three deliveries in all, whichever consumer had them", async () => {
      const queue = uniqueName("interop-quorum-shared");
      const dlq = `${queue}-dlq`;
      const job = '{"job":9}';
      const dead: Seen[] = [];
      const attempts: number[] = [];
      const rust = await rustConsumer(queue, { quorum: true, maxAttempts: 3, deadLetter: dlq });
      await rust.failOn([job]);
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(new RabbitQuorumQueue(queue, { prefetch: 1 }), { codec: bytesCodec })
          .maxAttempts(3)
          .deadLetter(dlq)
          .handle((payload: Uint8Array, ctx: HandlerContext) => {
            if (text(payload) !== job) return undefined;
            attempts.push(ctx.attempt);
            return retry();
          });
        // This connection declared the source queue, so ours shows the dead letter's three
        // deliveries as its retry count, and counts the reader's own attempts from there.
        b.subscriber(new RabbitQuorumQueue(dlq), { codec: bytesCodec }).handle(
          (payload: Uint8Array, ctx: HandlerContext) => {
            dead.push({
              payload: text(payload),
              headers: [["retry-count", ctx.headers.getString("x-ruststream-retry-count") ?? ""]],
              key: undefined,
              attempt: ctx.attempt,
            });
          },
        );
      });
      // Ours declares the queue the crate declared: the server accepts it only when every
      // argument is equal (x-queue-type, x-delivery-limit, the dead-letter route).
      t = await TestApp.startLive(app);
      const others = [...Array(10).keys()].map((i) => `other-${i}`);
      await tsPublish(queue, [
        ...others.slice(0, 5).map((p) => ({ payload: bytes(p), headers: [], key: p })),
        { payload: bytes(job), headers: [], key: "job-9" },
        ...others.slice(5).map((p) => ({ payload: bytes(p), headers: [], key: p })),
      ]);
      await expect
        .poll(() => dead.length, {
          timeout: 20_000,
          message: `dead letter; ours ${JSON.stringify(attempts)}, rust ${JSON.stringify(rust.deliveries.map((d) => [text(d.payload), d.outcome]))}`,
        })
        .toBe(1);
      const rustCalls = rust.deliveries.filter((d) => text(d.payload) === job);
      // Three deliveries in all, whichever consumer had them: the server's limit, declared once.
      expect(attempts.length + rustCalls.length).toBe(3);
      for (const attempt of attempts) expect([1, 2, 3]).toContain(attempt);
      expect(dead[0]!.payload).toBe(job);
      expect(dead[0]!.headers).toEqual([["retry-count", "3"]]);
      expect(dead[0]!.attempt).toBe(1);
    });

    it("a delayed retry both ways: the crate's copy waits in <queue>.retry and ours reads it at attempt 2; ours' copy waits in <queue>.wait.<ms> and the crate reads it at attempt 3, its last, and moves it to a dead letter ours reads", async () => {
      const queue = uniqueName("interop-delay");
      const dlq = `${queue}-dlq`;
      const job = '{"job":10}';
      const delayMs = 2000;
      // The crate fails the first delivery with a delay, then holds what comes next: its copy,
      // back from the waiting queue, stays unacked there until the service is killed, and the
      // server hands it to the next consumer.
      const first = await rustConsumer(queue, { delay: true, deadLetter: dlq });
      await first.failOn([job], { delayMs });
      await tsPublish(queue, [
        { payload: bytes(job), headers: [["x-trace", "t-10"]], key: "job-10" },
      ]);
      await first.waitForDeliveries(1);
      await first.hold();
      await first.waitForDeliveries(2);
      expect(first.deliveries.map((d) => [d.retryCount, d.attempt, d.outcome])).toEqual([
        [0, 1, "retry_after"],
        [1, 2, "hold"],
      ]);
      await first.kill();

      // Ours reads the queue the crate declared (the node takes both declarations as one queue).
      const seen: Seen[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(new RabbitQueue(queue), { codec: bytesCodec })
          .maxAttempts(3)
          .deadLetter(dlq)
          .handle((payload: Uint8Array, ctx: HandlerContext) => {
            seen.push(seenOf(payload, ctx));
            return retryAfter(delayMs);
          });
      });
      t = await TestApp.startLive(app);
      await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(1);
      const [copy] = seen;
      expect(text(Buffer.from(copy!.payload, "base64"))).toBe(job);
      expect(copy!.attempt).toBe(2);
      expect(copy!.key).toBe("job-10");
      const copyHeaders = new Map(copy!.headers);
      expect(copyHeaders.get("x-trace")).toBe("t-10");
      expect(copyHeaders.get(headerNames.retryCount)).toBe("1");
      // The server's record of the wait: the copy expired in the crate's waiting queue.
      const death = JSON.parse(copyHeaders.get("x-death")!) as { queue: string; reason: string }[];
      expect(death[0]).toMatchObject({ queue: `${queue}.retry`, reason: "expired" });
      // Ours' copy in its wait queue, confirmed, and the original acked, well inside the delay:
      // then nothing of ours reads the queue when the copy comes back.
      await t.settle();
      await t.stop();
      t = undefined;

      // The dead letter's reader first, so the queue exists when the crate's runtime publishes to
      // it. A dead letter the crate writes carries its retry count alone (core's README), so its
      // first delivery here is attempt 4: the reader's cap is above it.
      const dead: Seen[] = [];
      const reader = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
        live(),
        (b) => {
          b.subscriber(new RabbitQueue(dlq), { codec: bytesCodec })
            .maxAttempts(5)
            .handle((payload: Uint8Array, ctx: HandlerContext) => {
              dead.push(seenOf(payload, ctx));
            });
        },
      );
      t = await TestApp.startLive(reader);
      const second = await rustConsumer(queue, { delay: true, deadLetter: dlq });
      await second.failOn([job], { delayMs });
      await second.waitForDeliveries(1);
      const [back] = second.deliveries;
      expect(text(back!.payload)).toBe(job);
      expect(back!.retryCount).toBe(2);
      expect(back!.attempt).toBe(3);
      expect(back!.partitionKey?.toString()).toBe("job-10");
      expect(headerOf(back!, "x-trace")).toBe("t-10");
      // The crate's third attempt was its last: its runtime moves it to the dead letter.
      await expect.poll(() => dead.length, { timeout: 10_000 }).toBe(1);
      expect(text(Buffer.from(dead[0]!.payload, "base64"))).toBe(job);
      expect(new Map(dead[0]!.headers).get(headerNames.retryCount)).toBe("3");
      expect(dead[0]!.attempt).toBe(4);
      expect((await second.report()).length).toBe(1);
    });

    it("a classic queue's runtime copies across: ours' copy goes to the crate while ours holds the original; the crate's copies come round until ours takes one, each counted on from the last", async () => {
      const queue = uniqueName("interop-copies");
      const dlq = `${queue}-dlq`;
      const job = '{"job":11}';
      // High enough that the copies come round to ours long before either side's cap.
      const cap = 20;
      const attempts: number[] = [];
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        // One unacked delivery at most: ours publishes its copy (and waits for the server's
        // confirm) before it acks the original, so while it holds that original the queue can
        // give the copy only to the crate's consumer.
        b.subscriber(new RabbitQueue(queue, { prefetch: 1 }), { codec: bytesCodec })
          .maxAttempts(cap)
          .deadLetter(dlq)
          .handle(async (_payload: Uint8Array, ctx: HandlerContext) => {
            attempts.push(ctx.attempt);
            if (ctx.attempt > 1) return undefined;
            // The first attempt waits for the crate's consumer, so the copy has somewhere to go.
            await released;
            return retry();
          });
      });
      t = await TestApp.startLive(app);
      await tsPublish(queue, [{ payload: bytes(job), headers: [], key: "job-11" }]);
      await expect.poll(() => attempts.length, { timeout: 10_000 }).toBe(1);
      // The crate declares the queue ours declared: the node takes both as one queue.
      const rust = await rustConsumer(queue, { prefetch: 1, maxAttempts: cap, deadLetter: dlq });
      await rust.failOn([job]);
      release();
      await expect.poll(() => attempts.length, { timeout: 10_000 }).toBe(2);
      // The crate rejects its delivery before it publishes the copy, so each of its copies goes
      // to whichever consumer the queue picks: the crate's own (counted on there) or ours.
      const rusts = (await rust.report()).map((d) => [text(d.payload), d.retryCount, d.attempt]);
      expect(rusts.length).toBeGreaterThan(0);
      expect(rusts).toEqual(rusts.map((_, i) => [job, i + 1, i + 2]));
      expect(attempts).toEqual([1, rusts.length + 2]);
    });

    it("requests across over direct reply-to: ours asks the crate's responder, the crate asks our handler", async () => {
      const queue = uniqueName("interop-ask");
      const rust = await rustConsumer(queue, { reply: true });
      const connected = await live().connect();
      try {
        const publisher = await new RabbitPublish().pair(connected);
        const reply = await publisher.request(
          { name: queue, payload: bytes("ping"), headers: new HeaderMap([["x-trace", "t-1"]]) },
          { timeoutMs: 5000 },
        );
        expect(text(reply.payload)).toBe("rust:ping");
      } finally {
        await connected.shutdown();
      }
      await rust.waitForDeliveries(1);
      expect(headerOf(rust.deliveries[0]!, "x-trace")).toBe("t-1");
      expect(headerOf(rust.deliveries[0]!, "reply-to")).toMatch(/^amq\.rabbitmq\.reply-to\./);
      expect(headerOf(rust.deliveries[0]!, "correlation-id")).not.toBeNull();

      const asked = uniqueName("interop-asked");
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(new RabbitQueue(asked), { codec: bytesCodec })
          .reply()
          .handle((payload: Uint8Array) => bytes(`ts:${text(payload)}`));
      });
      t = await TestApp.startLive(app);
      const answer = await rust.request({ key: asked, payload: bytes("pong") });
      expect(answer.payload.toString()).toBe("ts:pong");
    });
  },
  { timeout: 120_000 },
);
