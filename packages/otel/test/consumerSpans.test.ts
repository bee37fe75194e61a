import { trace } from "@opentelemetry/api";
import type { Delivery } from "@ruststream/core";
import { expect, it } from "vitest";
import { ConsumerSpans } from "../src/consumerSpans.js";

// Where the consumer span of a delivery is kept: on the delivery, or beside it when it is frozen.

const span = (spanId: string) =>
  trace.wrapSpanContext({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId, traceFlags: 1 });

it("finds the span of each delivery, frozen or not, and none for another or another instance", () => {
  const spans = new ConsumerSpans();
  const open = {} as Delivery;
  const frozen = Object.freeze({}) as Delivery;
  const first = span("00f067aa0ba902b7");
  const second = span("b7ad6b7169203331");
  spans.remember(open, first);
  spans.remember(frozen, second);
  expect(spans.of(open)).toBe(first);
  expect(spans.of(frozen)).toBe(second);
  expect(spans.of({} as Delivery)).toBeUndefined();
  // Two tracing() middlewares in one process keep their own spans.
  expect(new ConsumerSpans().of(open)).toBeUndefined();
});
