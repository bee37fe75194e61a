import { context, type SpanContext } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";

// The OpenTelemetry SDK as a service sets it up, exporting to memory: a tracer provider to hand to
// tracing(), and the spans it finished. The context manager is the Node one a service registers
// (the SDK's NodeTracerProvider does the same), so a span the handler opens sees the consumer's.

let contextManager: AsyncLocalStorageContextManager | undefined;

export interface SpanCapture {
  readonly provider: BasicTracerProvider;
  /** Every finished span, in the order they ended. */
  spans(): ReadableSpan[];
  /** The one finished span of that name; throws naming the spans there are otherwise. */
  one(name: string): ReadableSpan;
  /** Every finished span of that name, in the order they ended. */
  all(name: string): ReadableSpan[];
  /**
   * Where `start <name>` or `end <name>` stands in the order spans started and ended: the order the
   * code ran, which two spans' timestamps cannot tell within a millisecond (the SDK's clock is
   * anchored per trace, so times of one run may disagree by that much).
   */
  step(what: string): number;
}

/** Records each span's start and end, in the order they happen. */
class StepRecorder implements SpanProcessor {
  readonly steps: string[] = [];
  onStart(span: Span): void {
    this.steps.push(`start ${span.name}`);
  }
  onEnd(span: ReadableSpan): void {
    this.steps.push(`end ${span.name}`);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export function captureSpans(): SpanCapture {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const recorder = new StepRecorder();
  const provider = new BasicTracerProvider({
    spanProcessors: [recorder, new SimpleSpanProcessor(exporter)],
  });
  const spans = () => exporter.getFinishedSpans();
  const all = (name: string) => spans().filter((s) => s.name === name);
  return {
    provider,
    spans,
    all,
    step(what) {
      const at = recorder.steps.indexOf(what);
      if (at === -1) throw new Error(`no "${what}" among: ${recorder.steps.join(", ")}`);
      return at;
    },
    one(name) {
      const found = all(name);
      if (found.length !== 1) {
        throw new Error(
          `${found.length} spans named "${name}"; the spans: ${spans()
            .map((s) => s.name)
            .join(", ")}`,
        );
      }
      return found[0]!;
    },
  };
}

/** The parent's span id, or undefined for a root span. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The `traceparent` naming a span context, as it travels. */
export function traceparentOf(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-0${context.traceFlags & 1}`;
}
