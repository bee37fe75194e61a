import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import {
  type Broker,
  bytes,
  drop,
  headerNames,
  MemoryBroker,
  MemoryTopic,
  type OutgoingMessage,
  type PublishPurpose,
  type RunningApp,
  RustStream,
  silentLogger,
} from "@ruststream/core";
import { FileBroker } from "@ruststream/file";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { tracing } from "../src/index.js";
import { captureSpans, parentOf, type SpanCapture, traceparentOf } from "./spanCapture.js";

// The spans of real apps on the memory broker, exported by the OpenTelemetry SDK to memory: which
// spans there are, who is whose parent, what they say, and what the messages carry on the wire.

const dir = mkdtempSync(join(tmpdir(), "ruststream-otel-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** What the app published, after middleware, by purpose: the headers as they went on the wire. */
function published(app: RustStream): { purpose: PublishPurpose; message: OutgoingMessage }[] {
  const seen: { purpose: PublishPurpose; message: OutgoingMessage }[] = [];
  app.observe((event) => {
    if (event.type === "publish") seen.push({ purpose: event.purpose, message: event.message });
  });
  return seen;
}

const newApp = () => new RustStream({ name: "shop", version: "1.0.0", logger: silentLogger });

describe("a delivery and its reply", () => {
  it("links send -> process -> send reply -> process reply, with the messaging attributes", async () => {
    const capture = captureSpans();
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    const wire = published(app);
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber<{ id: number }>(new MemoryTopic("orders", { group: "billing" }))
        .reply("receipts")
        .handle((order) => ({ orderId: order.id }));
      b.subscriber("receipts").handle(() => {});
    });
    running = await app.start();
    await running.publish(
      "orders",
      { id: 7 },
      {
        headers: { [headerNames.messageId]: "m-7", [headerNames.correlationId]: "c-7" },
      },
    );
    await running.whenIdle();

    const send = capture.one("send orders");
    const process = capture.one("process orders");
    const sendReply = capture.one("send receipts");
    const processReply = capture.one("process receipts");
    const trace = send.spanContext().traceId;
    for (const span of [process, sendReply, processReply]) {
      expect(span.spanContext().traceId).toBe(trace);
    }
    expect(parentOf(send)).toBeUndefined();
    expect(parentOf(process)).toBe(send.spanContext().spanId);
    expect(parentOf(sendReply)).toBe(process.spanContext().spanId);
    expect(parentOf(processReply)).toBe(sendReply.spanContext().spanId);
    // A process span links to the message's creation context, as the conventions ask.
    expect(process.links.map((l) => l.context.spanId)).toEqual([send.spanContext().spanId]);

    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.attributes).toEqual({
      "messaging.system": "memory",
      "messaging.destination.name": "orders",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.message.id": "m-7",
      "messaging.message.conversation_id": "c-7",
      "messaging.consumer.group.name": "billing",
      "ruststream.attempt": 1,
    });
    expect(send.attributes).toEqual({
      "messaging.system": "memory",
      "messaging.destination.name": "orders",
      "messaging.operation.type": "send",
      "messaging.operation.name": "send",
      "messaging.message.id": "m-7",
      "messaging.message.conversation_id": "c-7",
      "ruststream.publish.purpose": "app",
    });
    // The reply carries the correlation id; a subscriber in no group gives its span no group name.
    expect(sendReply.attributes).toMatchObject({
      "messaging.system": "memory",
      "messaging.destination.name": "receipts",
      "messaging.message.conversation_id": "c-7",
      "ruststream.publish.purpose": "reply",
    });
    expect(processReply.attributes["messaging.consumer.group.name"]).toBeUndefined();
    expect(process.status.code).toBe(SpanStatusCode.UNSET);

    // On the wire each message carries its own producer span's context.
    const traceparents = wire.map((w) => w.message.headers?.getString(headerNames.traceparent));
    expect(traceparents).toEqual([
      traceparentOf(send.spanContext()),
      traceparentOf(sendReply.spanContext()),
    ]);
  });
});

describe("a request and its reply", () => {
  it("keeps the requester's trace: requester -> send request -> process -> send reply, whose context reaches the requester", async () => {
    const capture = captureSpans();
    const tracer = capture.provider.getTracer("checkout");
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    const wire = published(app);
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber<{ sku: string }>("prices")
        .reply()
        .handle((ask) => ({ sku: ask.sku, cents: 250 }));
    });
    running = await app.start();
    const app_ = running;
    // The request goes through publish middleware like any publish: its span is a child of the
    // span active where it was made, and lasts until the reply came.
    const answer = await tracer.startActiveSpan("checkout", async (span) => {
      try {
        return await app_.request("prices", { sku: "apple" }, { timeoutMs: 5_000 });
      } finally {
        span.end();
      }
    });
    await running.whenIdle();

    expect(answer).toEqual({ sku: "apple", cents: 250 });
    const checkout = capture.one("checkout");
    const sendRequest = capture.one("send prices");
    const process = capture.one("process prices");
    const replies = capture.spans().filter((s) => s.name.startsWith("send ") && s !== sendRequest);
    expect(replies).toHaveLength(1);
    const sendReply = replies[0]!;
    expect(sendRequest.kind).toBe(SpanKind.PRODUCER);
    expect(sendRequest.attributes["ruststream.publish.purpose"]).toBe("request");
    expect(parentOf(sendRequest)).toBe(checkout.spanContext().spanId);
    expect(parentOf(process)).toBe(sendRequest.spanContext().spanId);
    expect(parentOf(sendReply)).toBe(process.spanContext().spanId);
    // The request's span covers the whole round trip: it starts before the replier's handler and
    // ends after the reply was sent, in the order the code ran (timestamps of two spans may
    // disagree by a millisecond, which made a comparison of them flaky).
    expect(capture.step("start send prices")).toBeLessThan(capture.step("start process prices"));
    expect(capture.step("end send prices")).toBeGreaterThan(
      capture.step(`start ${sendReply.name}`),
    );
    expect(
      wire
        .find((w) => w.purpose === "request")
        ?.message.headers?.getString(headerNames.traceparent),
    ).toBe(traceparentOf(sendRequest.spanContext()));
    expect(sendReply.spanContext().traceId).toBe(checkout.spanContext().traceId);
    // The request's correlation id is the conversation both spans belong to.
    const correlation = process.attributes["messaging.message.conversation_id"];
    expect(typeof correlation).toBe("string");
    expect(sendReply.attributes["messaging.message.conversation_id"]).toBe(correlation);
    // The reply the requester received carries the reply span's context.
    const reply = wire.find((w) => w.purpose === "reply")!.message;
    expect(reply.name).toBe(sendReply.attributes["messaging.destination.name"]);
    expect(reply.headers?.getString(headerNames.traceparent)).toBe(
      traceparentOf(sendReply.spanContext()),
    );
  });
});

describe("a batch", () => {
  it("makes one process span per batch, linked to each message's send span, its publishes inside it", async () => {
    const capture = captureSpans();
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber(new MemoryTopic("orders", { group: "billing" }))
        .publishes({ audit: "audit" })
        .batch(10)
        .handle(async (orders, ctx) => {
          await ctx.out.audit.publish({ count: orders.length });
        });
    });
    running = await app.start();
    for (let id = 1; id <= 3; id++) await running.publish("orders", { id });
    await expect
      .poll(() =>
        capture
          .all("process orders")
          .reduce((n, s) => n + Number(s.attributes["messaging.batch.message_count"]), 0),
      )
      .toBe(3);
    await running.whenIdle();

    const sends = capture.all("send orders").map((s) => s.spanContext().spanId);
    const batches = capture.all("process orders");
    expect(batches.flatMap((b) => b.links.map((l) => l.context.spanId)).sort()).toEqual(
      [...sends].sort(),
    );
    for (const batch of batches) {
      expect(batch.kind).toBe(SpanKind.CONSUMER);
      expect(parentOf(batch)).toBeUndefined();
      expect(batch.attributes).toMatchObject({
        "messaging.system": "memory",
        "messaging.destination.name": "orders",
        "messaging.operation.type": "process",
        "messaging.consumer.group.name": "billing",
      });
    }
    // Each batch's audit publish is a child of that batch's span.
    const audits = capture.all("send audit");
    expect(audits.map(parentOf).sort()).toEqual(batches.map((b) => b.spanContext().spanId).sort());
  });
});

describe("failures", () => {
  /** An app whose "jobs" handler always throws, with two attempts and a dead letter. */
  async function failingJobs(broker: Broker, capture: SpanCapture): Promise<void> {
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    app.broker(broker, (b) => {
      b.subscriber("jobs")
        .maxAttempts(2)
        .deadLetter("jobs-dlq")
        .onFailure({ backoff: { initialMs: 1, maxMs: 1 } })
        .handle(() => {
          throw new TypeError("no such job");
        });
      b.subscriber("jobs-dlq").handle(() => {});
    });
    running = await app.start();
    await running.publish("jobs", { id: 1 });
    await expect.poll(() => capture.all("process jobs-dlq").length).toBe(1);
    await running.whenIdle();
  }

  function expectFailedAttempts(attempts: readonly ReadableSpan[]): void {
    expect(attempts.map((a) => a.attributes["ruststream.attempt"])).toEqual([1, 2]);
    for (const attempt of attempts) {
      expect(attempt.status).toEqual({ code: SpanStatusCode.ERROR, message: "no such job" });
      expect(attempt.attributes["error.type"]).toBe("TypeError");
      const exception = attempt.events.find((e) => e.name === "exception");
      expect(exception?.attributes).toMatchObject({
        "exception.type": "TypeError",
        "exception.message": "no such job",
      });
    }
  }

  it("carries the trace across a retry copy and the dead letter (file: the runtime republishes)", async () => {
    const capture = captureSpans();
    // Without a consumer name the file broker cannot requeue, so the runtime publishes a copy.
    await failingJobs(new FileBroker({ path: join(dir, "jobs.ss") }), capture);

    const sends = capture.all("send jobs");
    const attempts = capture.all("process jobs");
    expect(sends).toHaveLength(2);
    expect(attempts).toHaveLength(2);
    const [send, retryCopy] = sends as [ReadableSpan, ReadableSpan];
    const [first, second] = attempts as [ReadableSpan, ReadableSpan];
    const dead = capture.one("send jobs-dlq");
    const deadRead = capture.one("process jobs-dlq");
    expect(parentOf(first)).toBe(send.spanContext().spanId);
    expect(parentOf(retryCopy)).toBe(first.spanContext().spanId);
    expect(parentOf(second)).toBe(retryCopy.spanContext().spanId);
    expect(parentOf(dead)).toBe(second.spanContext().spanId);
    expect(parentOf(deadRead)).toBe(dead.spanContext().spanId);
    for (const span of [first, retryCopy, second, dead, deadRead]) {
      expect(span.spanContext().traceId).toBe(send.spanContext().traceId);
    }
    expect(first.attributes["messaging.system"]).toBe("file");
    expectFailedAttempts(attempts);
  });

  it("carries the trace across a requeue and the dead letter (memory: the broker brings it back)", async () => {
    const capture = captureSpans();
    await failingJobs(new MemoryBroker(), capture);

    // A requeued message comes back as it was sent, so both attempts are children of its send.
    const send = capture.one("send jobs");
    const attempts = capture.all("process jobs");
    expect(attempts).toHaveLength(2);
    const [first, second] = attempts as [ReadableSpan, ReadableSpan];
    const dead = capture.one("send jobs-dlq");
    expect(parentOf(first)).toBe(send.spanContext().spanId);
    expect(parentOf(second)).toBe(send.spanContext().spanId);
    expect(parentOf(dead)).toBe(second.spanContext().spanId);
    expect(parentOf(capture.one("process jobs-dlq"))).toBe(dead.spanContext().spanId);
    expectFailedAttempts(attempts);
  });

  it("gives a message that never reached a handler a dead letter in the trace it carries", async () => {
    const capture = captureSpans();
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .deadLetter("orders-dlq")
        .handle(() => {});
    });
    running = await app.start();
    // Not JSON: the subscriber's codec refuses it before any handler runs.
    await running.publish("orders", new TextEncoder().encode("{not json"), { codec: bytes });
    await running.whenIdle();

    const send = capture.one("send orders");
    const dead = capture.one("send orders-dlq");
    expect(capture.all("process orders")).toEqual([]);
    expect(parentOf(dead)).toBe(send.spanContext().spanId);
    expect(dead.spanContext().traceId).toBe(send.spanContext().traceId);
  });

  it("marks a publish the broker refused failed, with its error code", async () => {
    const capture = captureSpans();
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    app.broker(new MemoryBroker({ maxMessageBytes: 16 }));
    running = await app.start();
    await expect(running.publish("big", { text: "x".repeat(64) })).rejects.toThrow();

    const send = capture.one("send big");
    expect(send.status.code).toBe(SpanStatusCode.ERROR);
    expect(send.attributes["error.type"]).toBe("publish-refused");
    expect(send.events.map((e) => e.name)).toEqual(["exception"]);
  });

  it("records the outcome a handler asked for", async () => {
    const capture = captureSpans();
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber("orders").handle(async () => drop());
    });
    running = await app.start();
    await running.publish("orders", { id: 1 });
    await running.whenIdle();
    const process = capture.one("process orders");
    expect(process.attributes["ruststream.outcome"]).toBe("drop");
    expect(process.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe("publishes made while a handler runs", () => {
  it("are children of the span the handler opened, or of the consumer span", async () => {
    const capture = captureSpans();
    const tracer = capture.provider.getTracer("pricing");
    const app = newApp().use(tracing({ tracerProvider: capture.provider }));
    let app_: RunningApp | undefined;
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .publishes({ audit: "audit" })
        .handle(async (_order, ctx) => {
          // Outside any ctx.out: an app publish from inside the handler is in its span too.
          await app_!.publish("notes", { note: "seen" });
          await tracer.startActiveSpan("price", async (span) => {
            await ctx.out.audit.publish({ priced: true });
            span.end();
          });
        });
    });
    running = await app.start();
    app_ = running;
    await running.publish("orders", { id: 1 });
    await running.whenIdle();

    const process = capture.one("process orders");
    const price = capture.one("price");
    expect(parentOf(capture.one("send notes"))).toBe(process.spanContext().spanId);
    expect(parentOf(price)).toBe(process.spanContext().spanId);
    expect(parentOf(capture.one("send audit"))).toBe(price.spanContext().spanId);
  });
});

describe("sampling", () => {
  it("exports nothing when sampled out, and the messages still carry the trace, marked not sampled", async () => {
    const provider = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
    const app = newApp().use(tracing({ tracerProvider: provider }));
    const wire = published(app);
    const seen: (string | undefined)[] = [];
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .reply("receipts")
        .handle((_order, ctx) => {
          seen.push(ctx.headers.getString(headerNames.traceparent));
          return { ok: true };
        });
    });
    running = await app.start();
    await running.publish("orders", { id: 1 });
    await running.whenIdle();

    const [order, receipt] = wire.map((w) => w.message.headers?.getString(headerNames.traceparent));
    expect(order).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(seen).toEqual([order]);
    expect(receipt).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(receipt!.slice(3, 35)).toBe(order!.slice(3, 35));
    expect(receipt).not.toBe(order);
  });
});
