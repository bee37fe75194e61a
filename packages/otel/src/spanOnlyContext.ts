import {
  type Context,
  INVALID_SPAN_CONTEXT,
  ROOT_CONTEXT,
  type Span,
  trace,
} from "@opentelemetry/api";

/**
 * The key the API keeps a context's span under, learnt through the API itself: `trace.setSpan` sets
 * it on whatever context it is given, so a context that only records the key it is asked to set
 * answers it. (The API makes it with `Symbol.for`, so every copy of the API in a process shares it.)
 */
const spanKey: symbol = (() => {
  let found: symbol | undefined;
  const recorder: Context = {
    getValue: () => undefined,
    setValue(key) {
      found = key;
      return recorder;
    },
    deleteValue: () => recorder,
  };
  trace.setSpan(recorder, trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
  if (found === undefined) throw new Error("@opentelemetry/api's trace.setSpan set no context key");
  return found;
})();

/**
 * A context holding `span` and nothing else: what `trace.setSpan(ROOT_CONTEXT, span)` makes, the
 * parent of a span and the context a handler runs in, without the API's context per delivery (a
 * Map and three closures, made for every delivery and publish, most of them never read but for the
 * span). Anything set on it or deleted from it makes the API's own context, so it behaves as one.
 */
export class SpanOnlyContext implements Context {
  readonly #span: Span;

  constructor(span: Span) {
    this.#span = span;
  }

  getValue(key: symbol): unknown {
    return key === spanKey ? this.#span : undefined;
  }

  setValue(key: symbol, value: unknown): Context {
    return trace.setSpan(ROOT_CONTEXT, this.#span).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return trace.setSpan(ROOT_CONTEXT, this.#span).deleteValue(key);
  }
}
