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
  const { context, trace } = await import("@opentelemetry/api");
  const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    await import("@opentelemetry/sdk-trace-base");
  const { tracing } = await import("@ruststream/otel");
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new DroppingExporter())],
    ...(sampled
      ? { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.01) }) }
      : {}),
  });
  trace.setGlobalTracerProvider(provider);
  return (app) => {
    app.use(tracing());
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
];
