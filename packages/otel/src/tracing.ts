import type { TracerProvider } from "@opentelemetry/api";
import type { Middleware } from "@ruststream/core";
import { consumeBatchMiddleware, consumeMiddleware } from "./consume.js";
import { ConsumerSpans } from "./consumerSpans.js";
import { publishMiddleware } from "./publish.js";
import { tracerSource } from "./tracerSource.js";

export interface TracingOptions {
  /**
   * Where spans are made. Default: the global provider (`trace.setGlobalTracerProvider`, which an
   * SDK's `register()` or `start()` calls); until one is registered, tracing costs next to nothing
   * and the runtime still carries each delivery's `traceparent` onto what it publishes for it.
   */
  readonly tracerProvider?: TracerProvider;
}

/**
 * OpenTelemetry tracing for an app, as middleware: `app.use(tracing())`. A consumer span per
 * delivery (`process orders`), a producer span per publish (`send receipts`) carrying its context on
 * the wire as W3C `traceparent` and `tracestate`, replies, retry copies and dead letters inside the
 * trace of the delivery they are for. Attributes follow the OpenTelemetry messaging conventions.
 */
export function tracing(options: TracingOptions = {}): Middleware {
  const tracerOf = tracerSource(options.tracerProvider);
  const spans = new ConsumerSpans();
  return {
    consume: consumeMiddleware(tracerOf, spans),
    consumeBatch: consumeBatchMiddleware(tracerOf, spans),
    publish: publishMiddleware(tracerOf, spans),
  };
}
