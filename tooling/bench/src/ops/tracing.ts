// The rows that price @ruststream/otel: the middleware on the app with no tracer provider registered
// (off), and on, under the OpenTelemetry SDK set up as a service sets it up: a tracer provider
// registered globally with the Node context manager, a BatchSpanProcessor in front of an exporter,
// sampling every trace (and, in a row of its own, 1% of them). The exporter drops what it gets (a real one sends it to a collector off the
// dispatch path, on the processor's timer), so the row prices making, ending and batching the spans.
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { RustStream } from "@ruststream/core";
import type { OpsRow } from "./row.js";

/** Takes every batch and reports success, as an exporter whose collector always answers does. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  // 0 is ExportResultCode.SUCCESS (@opentelemetry/core, which the bench does not otherwise need).
  export: SpanExporter["export"] = (spans, done) => {
    this.spans += spans.length;
    done({ code: 0 });
  };
  async shutdown(): Promise<void> {}
}

/**
 * The SDK as a service registers it; `sampled`: a parent-based sampler keeping 1% of new traces,
 * as a busy service runs it, so most deliveries make spans that are not recorded.
 */
async function tracingOn(sampled: boolean): Promise<(app: RustStream) => void> {
  await registerSdk(sampled);
  const { tracing } = await import("@ruststream/otel");
  return (app) => {
    app.use(tracing());
  };
}

/** Registers the SDK globally as a service does (see the file's head). */
async function registerSdk(sampled: boolean): Promise<void> {
  const { context, trace } = await import("@opentelemetry/api");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    await import("@opentelemetry/sdk-trace-base");
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new DroppingExporter())],
    ...(sampled
      ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.01) }) }
      : {}),
  });
  trace.setGlobalTracerProvider(provider);
}

/**
 * The floor under any tracing of every delivery: the same SDK, and a consume middleware that only
 * starts and ends one span per delivery (no attributes, no context made active, nothing on the
 * wire, no producer spans). What this row costs, the SDK costs, whoever calls it.
 */
async function sdkSpanFloor(): Promise<(app: RustStream) => void> {
  await registerSdk(false);
  const { trace } = await import("@opentelemetry/api");
  const tracer = trace.getTracer("bench floor");
  return (app) => {
    app.use({
      consume: (_message, _ctx, next) => {
        const span = tracer.startSpan("process");
        // The bench's handlers return at once, so the span ends with the call.
        const result = next();
        span.end();
        return result;
      },
    });
  };
}

export const tracingRows: readonly OpsRow[] = [
  {
    name: "tracing loaded, off",
    async prepare() {
      const { tracing } = await import("@ruststream/otel");
      return (app) => {
        app.use(tracing());
      };
    },
  },
  {
    name: "tracing on",
    prepare: () => tracingOn(false),
  },
  {
    name: "tracing on, 1% sampled",
    prepare: () => tracingOn(true),
  },
  {
    name: "tracing floor: one bare SDK span per delivery",
    prepare: sdkSpanFloor,
  },
];
