import { trace } from "@opentelemetry/api";
import {
  headerNames,
  MemoryBroker,
  type OutgoingMessage,
  type Receipt,
  RustStream,
  silentLogger,
} from "@ruststream/core";
import { afterAll, describe, expect, it } from "vitest";
import { tracing } from "../src/index.js";
import { captureSpans } from "./spanCapture.js";

// tracing() without a provider uses the global one, and steps aside until an SDK registers it: the
// runtime's own propagation still carries the delivery's context onto its reply. This file owns the
// process's global provider (vitest runs each file in its own process).

afterAll(() => trace.disable());

describe("the global tracer provider", () => {
  it("leaves messages untouched while none is registered, and traces once one is", async () => {
    const middleware = tracing();
    // Off: the publish middleware hands on the very message it got.
    const message: OutgoingMessage = { name: "orders", payload: new Uint8Array([1]) };
    let handedOn: OutgoingMessage | undefined;
    const receipt: Receipt = { name: "orders" };
    await middleware.publish!(
      message,
      async (m) => {
        handedOn = m;
        return receipt;
      },
      { broker: "memory", purpose: "app" },
    );
    expect(handedOn).toBe(message);

    const app = new RustStream({ name: "shop", version: "1", logger: silentLogger }).use(
      middleware,
    );
    const replies: (string | undefined)[] = [];
    app.observe((event) => {
      if (event.type === "publish" && event.purpose === "reply")
        replies.push(event.message.headers?.getString(headerNames.traceparent));
    });
    app.broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .reply("receipts")
        .handle(() => ({ ok: true }));
    });
    const running = await app.start();
    const upstream = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    await running.publish("orders", { id: 1 }, { headers: { traceparent: upstream } });
    await running.whenIdle();
    // Untraced, the reply carries the delivery's own context on (the runtime does that).
    expect(replies).toEqual([upstream]);

    // An SDK registers its provider after the app was built: the same middleware now traces.
    const capture = captureSpans();
    expect(trace.setGlobalTracerProvider(capture.provider)).toBe(true);
    await running.publish("orders", { id: 2 }, { headers: { traceparent: upstream } });
    await running.whenIdle();
    await running.stop();
    // The app's publish continues the context its headers carry; the delivery continues the publish.
    const send = capture.one("send orders");
    expect(send.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    expect(capture.one("process orders").parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(replies[1]).toBe(
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${capture.one("send receipts").spanContext().spanId}-01`,
    );
  });
});
