import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SpanKind } from "@opentelemetry/api";
import { headerNames, type RunningApp, RustStream, silentLogger } from "@ruststream/core";
import { FileBroker, FileStream } from "@ruststream/file";
import { interopSuite, killRustServices, RustService } from "@ruststream/tooling-interop";
import { afterAll, afterEach, expect, it } from "vitest";
import { tracing } from "../src/index.js";
import { captureSpans, parentOf } from "./spanCapture.js";

// A trace a RustStream service starts, continued by ours on one stream file. The Rust service
// (tooling/interop's `serve`, ruststream 0.7.7 with its `otel` feature, on ruststream-sea-file)
// mounts RustStream's OpenTelemetry consume layer and reply propagation: an order that arrives with
// no trace context starts a trace there, and its reply carries the Rust consumer span's context.
// Our service then reads the reply with tracing on. sea-streamer-file knows one writer per file and
// RustStream's broker opens it on connect, so the Rust service exits before ours opens the file.

const dir = mkdtempSync(join(tmpdir(), "ruststream-otel-interop-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
  await killRustServices();
});

const traceparentFormat = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

interopSuite("a trace started by a RustStream service", () => {
  it("is continued by ours: same trace id, and our consumer span's parent is theirs", async () => {
    const path = join(dir, "orders.ss");
    const rust = await RustService.start({
      transport: "file",
      path,
      consume: { key: "orders", otel_reply: "receipts" },
    });
    await rust.publish({ key: "orders", payload: new TextEncoder().encode("order-1") });
    await rust.waitForDeliveries(1);
    // The order carried no trace; the consume layer started one and put its span's context in the
    // headers the handler saw.
    const seen = rust.deliveries[0]!;
    const header = (name: string) => seen.headers.find(([n]) => n === name)?.[1].toString("utf8");
    const theirs = header(headerNames.traceparent);
    expect(theirs).toMatch(traceparentFormat);
    const [, traceId, spanId] = traceparentFormat.exec(theirs!)!;
    expect(await rust.exit()).toBe(0);

    const capture = captureSpans();
    const received: { payload: string; traceparent: string | undefined }[] = [];
    const app = new RustStream({ name: "receipts", version: "1.0.0", logger: silentLogger }).use(
      tracing({ tracerProvider: capture.provider }),
    );
    app.broker(new FileBroker({ path, existingOnly: true }), (b) => {
      b.subscriber<{ echo: string }>(new FileStream("receipts", { start: "beginning" })).handle(
        (receipt, ctx) => {
          received.push({
            payload: receipt.echo,
            traceparent: ctx.headers.getString(headerNames.traceparent),
          });
        },
      );
    });
    running = await app.start();
    await expect.poll(() => capture.all("process receipts").length, { timeout: 10_000 }).toBe(1);

    // Their reply carries their consumer span's context, as their propagation transform writes it.
    expect(received).toEqual([{ payload: "order-1", traceparent: theirs }]);
    const ours = capture.one("process receipts");
    expect(ours.kind).toBe(SpanKind.CONSUMER);
    expect(ours.spanContext().traceId).toBe(traceId);
    expect(parentOf(ours)).toBe(spanId);
    expect(ours.parentSpanContext?.isRemote).toBe(true);
    expect(ours.links.map((l) => l.context.spanId)).toEqual([spanId]);
    expect(ours.attributes).toMatchObject({
      "messaging.system": "file",
      "messaging.destination.name": "receipts",
      "messaging.operation.type": "process",
    });
  });
});
