import {
  context,
  createContextKey,
  ROOT_CONTEXT,
  type SpanContext,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { SpanOnlyContext } from "../src/spanOnlyContext.js";
import { captureSpans } from "./spanCapture.js";

// The context a handler runs in and a span's parent: it must answer as the API's own context with
// the span set would, whatever is read, set or deleted on it.

const spanContext: SpanContext = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
};
const span = trace.wrapSpanContext(spanContext);
const other = createContextKey("another instrumentation's key");

describe("a context holding one span", () => {
  it("answers the span as the API's context with it set does, and nothing else", () => {
    const ours = new SpanOnlyContext(span);
    const api = trace.setSpan(ROOT_CONTEXT, span);
    expect(trace.getSpan(ours)).toBe(span);
    expect(trace.getSpanContext(ours)).toBe(trace.getSpanContext(api));
    expect(ours.getValue(other)).toBeUndefined();
  });

  it("keeps the span beside what is set on it, and loses it where it is deleted", () => {
    const ours = new SpanOnlyContext(span);
    const set = ours.setValue(other, 42);
    expect(set.getValue(other)).toBe(42);
    expect(trace.getSpan(set)).toBe(span);
    // Setting made a new context: the first still holds the span alone.
    expect(ours.getValue(other)).toBeUndefined();
    expect(trace.getSpan(trace.deleteSpan(ours))).toBeUndefined();
    const replaced = trace.setSpan(
      ours,
      trace.wrapSpanContext({ ...spanContext, spanId: "b7ad6b7169203331" }),
    );
    expect(trace.getSpanContext(replaced)?.spanId).toBe("b7ad6b7169203331");
    expect(trace.getSpan(ours)).toBe(span);
  });

  it("is the parent of a span started in it, active or given, under the context manager", () => {
    const capture = captureSpans();
    const tracer = capture.provider.getTracer("test");
    tracer.startSpan("given", {}, new SpanOnlyContext(span)).end();
    context.with(new SpanOnlyContext(span), () => {
      expect(trace.getActiveSpan()).toBe(span);
      tracer.startSpan("active").end();
    });
    for (const name of ["given", "active"]) {
      const started = capture.one(name);
      expect(started.spanContext().traceId).toBe(spanContext.traceId);
      expect(started.parentSpanContext?.spanId).toBe(spanContext.spanId);
    }
  });
});
