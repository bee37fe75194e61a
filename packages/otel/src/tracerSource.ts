import { type Tracer, type TracerProvider, trace } from "@opentelemetry/api";

/** The instrumentation scope our spans carry. */
export const scopeName = "@ruststream/otel";

/** A global provider that only forwards to another once an SDK registers one. */
interface DelegatingProvider extends TracerProvider {
  getDelegateTracer(name: string): Tracer | undefined;
}

function delegates(provider: TracerProvider): provider is DelegatingProvider {
  return typeof (provider as Partial<DelegatingProvider>).getDelegateTracer === "function";
}

/**
 * Where spans come from: the provider given, or the global one. The global one is looked up on every
 * call until an SDK has registered a provider behind it, so tracing switches on when the SDK starts,
 * even after the app was built; until then the answer is `undefined` and the middleware steps aside
 * (a no-op tracer would still cost a span object and a context per message).
 *
 * The check is duck-typed rather than `instanceof ProxyTracerProvider`: the global may be the proxy of
 * another copy of @opentelemetry/api in the process.
 */
export function tracerSource(provider: TracerProvider | undefined): () => Tracer | undefined {
  if (provider !== undefined) {
    const fixed = provider.getTracer(scopeName);
    return () => fixed;
  }
  let found: Tracer | undefined;
  return () => {
    if (found !== undefined) return found;
    const global = trace.getTracerProvider();
    found = delegates(global) ? global.getDelegateTracer(scopeName) : global.getTracer(scopeName);
    return found;
  };
}
