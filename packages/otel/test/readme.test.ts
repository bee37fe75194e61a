import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { MemoryBroker, RustStream, silentLogger } from "@ruststream/core";
import { afterAll, expect, it } from "vitest";
import { tracing } from "../src/index.js";

// The README's example, with an in-memory exporter in place of the console one. This file owns the
// process's global provider and context manager (vitest runs each file in its own process).

afterAll(() => {
  trace.disable();
  context.disable();
});

it("runs the README's example: one trace, send orders -> process orders -> send receipts", async () => {
  const exporter = new InMemorySpanExporter();

  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);

  const app = new RustStream({ name: "orders", version: "1.0.0", logger: silentLogger }).use(
    tracing(),
  );
  app.broker(new MemoryBroker(), (b) => {
    b.subscriber<{ id: number }>("orders")
      .reply("receipts")
      .handle((order) => ({ orderId: order.id }));
  });

  const running = await app.start();
  await running.publish("orders", { id: 1 });
  await running.whenIdle();
  await running.stop();
  // The README shuts the provider down, which flushes; an in-memory exporter forgets its spans
  // when shut down, so this reads them after the flush and shuts down after.
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  await provider.shutdown();
  const byName = new Map(spans.map((s) => [s.name, s]));
  expect([...byName.keys()].sort()).toEqual(["process orders", "send orders", "send receipts"]);
  const send = byName.get("send orders")!;
  const process = byName.get("process orders")!;
  const reply = byName.get("send receipts")!;
  expect(process.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
  expect(reply.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
  expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
});
