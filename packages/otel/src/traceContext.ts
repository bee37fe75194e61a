import { createTraceState, type SpanContext, TraceFlags } from "@opentelemetry/api";
import { type HeaderMap, headerNames, type ReadonlyHeaderMap } from "@ruststream/core";

// W3C Trace Context (level 1) on RustStream's own header names, which are the W3C ones: the API
// package holds no propagator (that lives in the SDK's @opentelemetry/core), and the global one is a
// no-op until an SDK installs one. RustStream reads and writes these headers whatever SDK is set
// up, so a Rust and a TypeScript service always continue each other's traces.

const dash = 0x2d;

/** The value of a lowercase hex digit's char code, or -1 for anything else. */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * True when `text[from..to)` is lowercase hex and, with `nonZero`, not all zeros. Read char by char:
 * a delivery's traceparent is read on every delivery, and regular expressions and slices of each
 * field cost several times this.
 */
function isLowerHex(text: string, from: number, to: number, nonZero: boolean): boolean {
  let any = 0;
  for (let i = from; i < to; i++) {
    const value = hexValue(text.charCodeAt(i));
    if (value < 0) return false;
    any |= value;
  }
  return !nonZero || any !== 0;
}

/**
 * The span context a `traceparent` value names, or `undefined` when it is malformed: `version "-"
 * trace-id "-" parent-id "-" trace-flags`, lowercase hex, neither id all zeros. A version above 00
 * may append fields after a dash, which are ignored; version ff is invalid.
 */
export function parseTraceparent(value: string): SpanContext | undefined {
  const text = value.trim();
  if (
    text.length < 55 ||
    text.charCodeAt(2) !== dash ||
    text.charCodeAt(35) !== dash ||
    text.charCodeAt(52) !== dash
  ) {
    return undefined;
  }
  const high = hexValue(text.charCodeAt(0));
  const low = hexValue(text.charCodeAt(1));
  if (high < 0 || low < 0 || (high === 15 && low === 15)) return undefined;
  // Version 00 is exactly 55 characters; a later version may carry more after a dash.
  if (
    high === 0 && low === 0 ? text.length !== 55 : text.length > 55 && text.charCodeAt(55) !== dash
  ) {
    return undefined;
  }
  if (
    !isLowerHex(text, 3, 35, true) ||
    !isLowerHex(text, 36, 52, true) ||
    !isLowerHex(text, 53, 55, false)
  ) {
    return undefined;
  }
  return {
    traceId: text.slice(3, 35),
    spanId: text.slice(36, 52),
    // Only the sampled bit (the lowest) is defined; the others are not carried on (the spec says
    // so for 00).
    traceFlags: hexValue(text.charCodeAt(54)) & TraceFlags.SAMPLED,
    isRemote: true,
  };
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
