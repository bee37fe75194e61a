// The OpenTelemetry SDK as a service registers it, for every row that traces (the in-process rows
// of tracing.ts and the broker drains of drain/): a tracer provider registered globally with the
// Node context manager, a BatchSpanProcessor in front of an exporter that drops each batch.
import type { BasicTracerProvider, SpanExporter } from "@opentelemetry/sdk-trace-base";

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
 * Registers the SDK globally and answers its provider; `sampled`: a parent-based sampler keeping 1%
 * of new traces, else every trace sampled (the SDK's default).
 */
export async function registerSdk(sampled: boolean): Promise<BasicTracerProvider> {
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
  return provider;
}
