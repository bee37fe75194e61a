import { createTraceState, TraceFlags } from "@opentelemetry/api";
import { HeaderMap } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  extractTraceContext,
  formatTraceparent,
  injectTraceContext,
  parseTraceparent,
} from "../src/traceContext.js";

// W3C Trace Context as the spec writes it (https://www.w3.org/TR/trace-context/, section 3): what a
// traceparent must look like to be read, and what we write.

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const spanId = "00f067aa0ba902b7";
const valid = `00-${traceId}-${spanId}-01`;

describe("traceparent", () => {
  it("reads a valid value, sampled or not", () => {
    expect(parseTraceparent(valid)).toEqual({
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)?.traceFlags).toBe(TraceFlags.NONE);
  });

  it.each([
    ["uppercase hex", `00-${traceId.toUpperCase()}-${spanId}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${spanId}-01`],
    ["an all-zero parent id", `00-${traceId}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${traceId}-${spanId}-01`],
    ["version 00 with more after it", `${valid}-extra`],
    ["a short trace id", `00-${traceId.slice(1)}-${spanId}-01`],
    ["non-hex flags", `00-${traceId}-${spanId}-0g`],
    ["the wrong separators", `00_${traceId}_${spanId}_01`],
    ["nothing", ""],
  ])("refuses %s", (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it("reads a later version's four fields and ignores what it appends", () => {
    expect(parseTraceparent(`cc-${traceId}-${spanId}-01-what-comes-next`)?.spanId).toBe(spanId);
    expect(parseTraceparent(`cc-${traceId}-${spanId}-01`)?.traceId).toBe(traceId);
    // After the flags a later version must go on with a dash.
    expect(parseTraceparent(`cc-${traceId}-${spanId}-01x`)).toBeUndefined();
  });

  it.each([
    ["an uppercase parent id", `00-${traceId}-${spanId.toUpperCase()}-01`],
    ["uppercase flags", `00-${traceId}-${spanId}-0B`],
    ["an uppercase version", `0A-${traceId}-${spanId}-01`],
    ["a version that is not hex", `0g-${traceId}-${spanId}-01`],
    ["a dash inside the trace id", `00-${traceId.slice(0, 31)}--${spanId}-01`],
  ])("refuses %s, read character by character", (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it("reads the sampled bit of flags written with hex letters, and around whitespace", () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-0b`)?.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(parseTraceparent(`00-${traceId}-${spanId}-0a`)?.traceFlags).toBe(TraceFlags.NONE);
    expect(parseTraceparent(`00-${traceId}-${spanId}-ff`)?.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(parseTraceparent(` ${valid}\t`)).toEqual(parseTraceparent(valid));
  });

  it("keeps only the sampled flag, and writes version 00", () => {
    const read = parseTraceparent(`00-${traceId}-${spanId}-03`)!;
    expect(read.traceFlags).toBe(TraceFlags.SAMPLED);
    expect(formatTraceparent(read)).toBe(valid);
  });
});

describe("on headers", () => {
  it("extracts the context with its tracestate and injects it back the same", () => {
    const headers = new HeaderMap({
      traceparent: valid,
      tracestate: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
    });
    const context = extractTraceContext(headers)!;
    expect(context.traceState?.get("congo")).toBe("t61rcWkgMzE");
    const out = injectTraceContext(new HeaderMap(), context);
    expect(out.getString("traceparent")).toBe(valid);
    expect(out.getString("tracestate")).toBe("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  });

  it("ignores a tracestate without a valid traceparent", () => {
    expect(extractTraceContext(new HeaderMap({ tracestate: "rojo=1" }))).toBeUndefined();
    expect(
      extractTraceContext(new HeaderMap({ traceparent: "garbage", tracestate: "rojo=1" })),
    ).toBeUndefined();
  });

  it("removes a tracestate the new context does not carry", () => {
    const headers = new HeaderMap({ traceparent: valid, tracestate: "old=1" });
    injectTraceContext(headers, { traceId, spanId: "b7ad6b7169203331", traceFlags: 1 });
    expect(headers.getString("traceparent")).toBe(`00-${traceId}-b7ad6b7169203331-01`);
    expect(headers.has("tracestate")).toBe(false);
    injectTraceContext(headers, {
      traceId,
      spanId,
      traceFlags: 1,
      traceState: createTraceState("new=2"),
    });
    expect(headers.getString("tracestate")).toBe("new=2");
  });
});
