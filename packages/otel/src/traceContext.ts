import {
  createTraceState,
  isSpanContextValid,
  type SpanContext,
  TraceFlags,
} from "@opentelemetry/api";
import { type HeaderMap, headerNames, type ReadonlyHeaderMap } from "@ruststream/core";

// W3C Trace Context (level 1) on RustStream's own header names, which are the W3C ones: the API
// package holds no propagator (that lives in the SDK's @opentelemetry/core), and the global one is a
// no-op until an SDK installs one. RustStream reads and writes these headers whatever SDK is set
// up, so a Rust and a TypeScript service always continue each other's traces.

const lowerHex = /^[0-9a-f]+$/;

/**
 * The span context a `traceparent` value names, or `undefined` when it is malformed: `version "-"
 * trace-id "-" parent-id "-" trace-flags`, lowercase hex, neither id all zeros. A version above 00
 * may append fields after a dash, which are ignored; version ff is invalid.
 */
export function parseTraceparent(value: string): SpanContext | undefined {
  const text = value.trim();
  if (text.length < 55 || text[2] !== "-" || text[35] !== "-" || text[52] !== "-") return undefined;
  const version = text.slice(0, 2);
  if (!lowerHex.test(version) || version === "ff") return undefined;
  // Version 00 is exactly 55 characters; a later version may carry more after a dash.
  if (version === "00" ? text.length !== 55 : text.length > 55 && text[55] !== "-") {
    return undefined;
  }
  const traceId = text.slice(3, 35);
  const spanId = text.slice(36, 52);
  const flags = text.slice(53, 55);
  if (!lowerHex.test(traceId) || !lowerHex.test(spanId) || !lowerHex.test(flags)) return undefined;
  const context: SpanContext = {
    traceId,
    spanId,
    // Only the sampled bit is defined; the others are not carried on (the spec says so for 00).
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : undefined;
}

/** A span context as a `traceparent` value (version 00). */
export function formatTraceparent(context: SpanContext): string {
  const sampled = (context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
  return `00-${context.traceId}-${context.spanId}-${sampled ? "01" : "00"}`;
}

/** The producer's context a message carries, `tracestate` included, if its `traceparent` is valid. */
export function extractTraceContext(headers: ReadonlyHeaderMap): SpanContext | undefined {
  const traceparent = headers.getString(headerNames.traceparent);
  if (traceparent === undefined) return undefined;
  const context = parseTraceparent(traceparent);
  if (context === undefined) return undefined;
  const tracestate = headers.getString(headerNames.tracestate);
  // A malformed tracestate loses only its malformed members (the API's parser drops them).
  if (tracestate !== undefined && tracestate.length > 0) {
    return { ...context, traceState: createTraceState(tracestate) };
  }
  return context;
}

/**
 * Writes `context` as the message's `traceparent`, and its `tracestate` when it has one; a
 * `tracestate` left from an earlier context is removed, since it belonged to that one.
 */
export function injectTraceContext(headers: HeaderMap, context: SpanContext): HeaderMap {
  headers.set(headerNames.traceparent, formatTraceparent(context));
  const tracestate = context.traceState?.serialize();
  if (tracestate !== undefined && tracestate.length > 0) {
    headers.set(headerNames.tracestate, tracestate);
  } else {
    headers.delete(headerNames.tracestate);
  }
  return headers;
}
