import {
  bytes as bytesCodec,
  type HandlerContext,
  HeaderMap,
  headerNames,
  RustStream,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { interopSuite, killRustServices } from "@ruststream/tooling-interop";
import { headerOf, headersAsText, sortedByName } from "@ruststream/tooling-interop/text";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { JetStreamSubject, NatsPublish, type NatsPublisher, NatsSubject } from "../src/index.js";
import { eventually } from "./env.live.js";
import {
  deleteTestStreams,
  live,
  rustConsumer,
  rustPublish,
  type Sent,
  stream,
  tsPublish,
  withKey,
} from "./interopSupport.js";

// RustStream's own NATS broker (ruststream-nats 0.7.1, tooling/interop's `serve`) beside ours on
// the real server: the same messages both ways on a core subject and on a JetStream stream
// (headers, the `nats-partition-key` header, the retry count), a message that always fails moved
// to each side's dead letter and read by the other, and requests answered across.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
  await deleteTestStreams();
});

// Text header values only: the crate refuses a value that is not one line of text, and sends
// what it takes as it is.
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

/** What one of our handlers saw. */
interface Seen {
  readonly payload: string;
  readonly headers: [string, string][];
  readonly key: string | undefined;
  readonly attempt: number;
}

/** An app of ours on `source`, recording every delivery; `fail` makes it retry those payloads. */
async function tsConsumer(
  source: NatsSubject | JetStreamSubject,
  seen: Seen[],
  options: { fail?: string; deadLetter?: string; maxAttempts?: number } = {},
) {
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
    const sub = b.subscriber(source, { codec: bytesCodec });
    const capped =
      options.deadLetter === undefined
        ? sub.maxAttempts(options.maxAttempts ?? 3)
        : sub.maxAttempts(options.maxAttempts ?? 3).deadLetter(options.deadLetter);
    capped.handle((payload: Uint8Array, ctx: HandlerContext) => {
      seen.push({
        payload: Buffer.from(payload).toString("base64"),
        headers: [...ctx.headers.entries()].map(([n, v]) => [n, Buffer.from(v).toString()]),
        key: ctx.delivery.partitionKey === undefined ? undefined : text(ctx.delivery.partitionKey),
        attempt: ctx.attempt,
      });
      return text(payload) === options.fail ? retry() : undefined;
    });
  });
  t = await TestApp.startLive(app);
}

interopSuite(
  "RustStream's NATS broker beside ours",
  () => {
    it("a core subject both ways: payload, every header, the partition key as nats-partition-key, the retry count as the attempt", async () => {
      const subject = uniqueName("interop-core");
      const rust = await rustConsumer(subject);
      await tsPublish(subject, messages);
      await rust.waitForDeliveries(messages.length);
      // NATS keeps headers in a map, so their order is not part of the contract: compared sorted.
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

      // The other way: the crate publishes, ours reads the same headers, key and attempt.
      const seen: Seen[] = [];
      await tsConsumer(new NatsSubject(subject), seen);
      await rustPublish(rust, subject, messages);
      await eventually(() => seen.length === messages.length, 10_000, "our deliveries");
      expect(seen).toEqual(
        messages.map((m, i) => ({
          payload: Buffer.from(m.payload).toString("base64"),
          headers: expect.anything(),
          key: m.key,
          attempt: i === 0 ? 3 : 1,
        })),
      );
      for (const [i, m] of messages.entries())
        expect(sortedByName(seen[i]!.headers)).toEqual(withKey(m));
    });

    it("a header value that is not text: ours sends it as =?rs-b64? text, which the crate hands its handler as it is", async () => {
      const subject = uniqueName("interop-binary");
      const rust = await rustConsumer(subject);
      const value = Uint8Array.from([0, 10, 255]);
      const connected = await live().connect();
      try {
        const publisher = await new NatsPublish().pair(connected);
        await publisher.publish({
          name: subject,
          payload: bytes("x"),
          headers: new HeaderMap([["x-bin", value]]),
        });
      } finally {
        await connected.shutdown();
      }
      await rust.waitForDeliveries(1);
      expect(headerOf(rust.deliveries[0]!, "x-bin")).toBe(
        `=?rs-b64?${Buffer.from(value).toString("base64")}`,
      );
    });

    it("a JetStream stream both ways: the crate's durable pull consumer reads ours, ours reads what the crate published", async () => {
      const subject = uniqueName("interop-js");
      await stream(subject, [subject]);
      const rust = await rustConsumer(subject, { stream: subject });
      await tsPublish(subject, messages, true);
      await rust.waitForDeliveries(messages.length);
      // On a stream the attempt is the server's delivery count: the retry-count header is read
      // (as the crate's retry count) but not counted.
      expect(
        rust.deliveries.map((d) => ({
          via: d.via,
          payload: Buffer.from(d.payload),
          headers: sortedByName(headersAsText(d.headers)),
          key: d.partitionKey?.toString() ?? null,
          attempt: d.attempt,
        })),
      ).toEqual(
        messages.map((m) => ({
          via: "jetstream",
          payload: Buffer.from(m.payload),
          headers: withKey(m),
          key: m.key ?? null,
          attempt: 1,
        })),
      );

      await rustPublish(rust, subject, messages);
      await rust.waitForDeliveries(messages.length * 2);
      const seen: Seen[] = [];
      await tsConsumer(new JetStreamSubject(subject, { stream: subject, durable: "ts" }), seen);
      await eventually(() => seen.length === messages.length * 2, 10_000, "our deliveries");
      for (const [i, m] of [...messages, ...messages].entries()) {
        expect(seen[i]!.payload).toBe(Buffer.from(m.payload).toString("base64"));
        expect(sortedByName(seen[i]!.headers)).toEqual(withKey(m));
        expect(seen[i]!.key).toBe(m.key);
        // Ours adds the retry-count header to the server's count (core's attemptOf: a copy
        // republished to a stream restarts the server's count); the crate's runtime takes the
        // server's count alone when there is one (1 for every message above).
        expect(seen[i]!.attempt).toBe(m === messages[0] ? 3 : 1);
      }
    });

    it("a message that always fails on the crate's JetStream consumer: the server counts three deliveries, the crate's dead letter carries it as it arrived, ours reads it", async () => {
      const subject = uniqueName("interop-js-dlq-r");
      const dlq = `${subject}-dlq`;
      await stream(subject, [subject]);
      const job = '{"job":7}';
      const rust = await rustConsumer(subject, {
        stream: subject,
        maxAttempts: 3,
        deadLetter: dlq,
      });
      await rust.failOn([job]);
      const seen: Seen[] = [];
      await tsConsumer(new NatsSubject(dlq), seen);
      await tsPublish(
        subject,
        [{ payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-7" }],
        true,
      );
      await eventually(() => seen.length === 1, 20_000, "the dead letter");
      expect(rust.deliveries.map((d) => [d.attempt, d.outcome])).toEqual([
        [1, "retry"],
        [2, "retry"],
        [3, "retry"],
      ]);
      const [dead] = seen;
      expect(Buffer.from(dead!.payload, "base64").toString()).toBe(job);
      expect(dead!.key).toBe("job-7");
      // Payload and headers as they arrived, no origin; the runtime raises the retry-count header
      // it carried by one (the copy's rule), whatever the server counted: 1 after three
      // deliveries, which ours reads as the attempt 2.
      expect(sortedByName(dead!.headers)).toEqual([
        ["nats-partition-key", "job-7"],
        [headerNames.retryCount, "1"],
        ["x-trace", "t-9"],
      ]);
      expect(dead!.attempt).toBe(2);
    });

    it("a message that always fails on our JetStream consumer: our dead letter carries its origin and the deliveries made, the crate's handler reads them", async () => {
      const subject = uniqueName("interop-js-dlq-t");
      const dlq = `${subject}-dlq`;
      await stream(subject, [subject]);
      const job = '{"job":8}';
      // The reader's cap above the count our copy carries: the runtime caps on the retry count.
      const reader = await rustConsumer(dlq, { maxAttempts: 10 });
      const seen: Seen[] = [];
      await tsConsumer(new JetStreamSubject(subject, { stream: subject, durable: "ts" }), seen, {
        fail: job,
        deadLetter: dlq,
      });
      await tsPublish(
        subject,
        [{ payload: bytes(job), headers: [["x-trace", "t-9"]], key: "job-8" }],
        true,
      );
      await reader.waitForDeliveries(1);
      expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
      const [read] = reader.deliveries;
      expect(text(read!.payload)).toBe(job);
      expect(read!.partitionKey?.toString()).toBe("job-8");
      expect(headerOf(read!, "x-trace")).toBe("t-9");
      expect(headerOf(read!, "x-ruststream-dlq-source")).toBe(subject);
      expect(headerOf(read!, "x-ruststream-dlq-reason")).toBe("max-attempts");
      expect(headerOf(read!, "x-ruststream-dlq-position")).toMatch(new RegExp(`^${subject}:\\d+$`));
      expect(headerOf(read!, "x-ruststream-dlq-consumer")).toBe("ts");
      // The three deliveries it had, which the crate reads as its retry count.
      expect(read!.retryCount).toBe(3);
      expect(read!.attempt).toBe(4);
    });

    it("a retry on a core subject in Rust: the runtime's copies carry x-ruststream-retry-count, and its dead letter carries 3, read by ours as the attempt 4", async () => {
      const subject = uniqueName("interop-core-retry");
      const dlq = `${subject}-dlq`;
      const job = "always-fails";
      const rust = await rustConsumer(subject, { maxAttempts: 3, deadLetter: dlq });
      await rust.failOn([job]);
      const seen: Seen[] = [];
      // The reader's cap above the count the dead letter carries: ours caps on it.
      await tsConsumer(new NatsSubject(dlq), seen, { maxAttempts: 10 });
      await tsPublish(subject, [{ payload: bytes(job), headers: [], key: undefined }]);
      await eventually(() => seen.length === 1, 20_000, "the dead letter");
      expect(rust.deliveries.map((d) => [d.retryCount, d.attempt, d.outcome])).toEqual([
        [0, 1, "retry"],
        [1, 2, "retry"],
        [2, 3, "retry"],
      ]);
      expect(seen[0]!.headers).toEqual([[headerNames.retryCount, "3"]]);
      expect(seen[0]!.attempt).toBe(4);
    });

    it("requests across: ours asks the crate's responder, the crate asks our handler", async () => {
      const subject = uniqueName("interop-ask");
      const rust = await rustConsumer(subject, { reply: true });
      const connected = await live().connect();
      try {
        const publisher = (await new NatsPublish().pair(connected)) as NatsPublisher;
        const reply = await publisher.request(
          { name: subject, payload: bytes("ping"), headers: new HeaderMap([["x-trace", "t-1"]]) },
          { timeoutMs: 5000 },
        );
        expect(text(reply.payload)).toBe("rust:ping");
      } finally {
        await connected.shutdown();
      }
      // The crate's handler saw our request with its inbox as the reply-to header.
      await rust.waitForDeliveries(1);
      expect(headerOf(rust.deliveries[0]!, "x-trace")).toBe("t-1");
      expect(headerOf(rust.deliveries[0]!, "reply-to")).toMatch(/^_INBOX\./);

      const asked = uniqueName("interop-asked");
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(live(), (b) => {
        b.subscriber(asked, { codec: bytesCodec })
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
