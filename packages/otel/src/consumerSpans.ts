import type { Span } from "@opentelemetry/api";
import type { Delivery } from "@ruststream/core";

/**
 * The consumer span of each delivery still reachable, for the publishes made on its behalf (a reply,
 * a `ctx.out` publish, a retry copy, a dead letter: each names its delivery as `cause`), so they
 * become its children even after the handler returned and the span ended.
 *
 * Kept on the delivery itself, under a symbol of this instance, rather than in a WeakMap: a WeakMap
 * entry per delivery made the collector's ephemeron work the largest single cost of tracing on the
 * in-process benchmark (about half the throughput), and the span goes when the delivery goes either
 * way. A delivery that cannot take a property (frozen) falls back to the WeakMap.
 */
export class ConsumerSpans {
  readonly #slot = Symbol("@ruststream/otel consumer span");
  readonly #frozen = new WeakMap<Delivery, Span>();

  remember(delivery: Delivery, span: Span): void {
    if (Object.isExtensible(delivery))
      (delivery as unknown as Record<symbol, Span>)[this.#slot] = span;
    else this.#frozen.set(delivery, span);
  }

  of(delivery: Delivery): Span | undefined {
    return (
      (delivery as unknown as Record<symbol, Span | undefined>)[this.#slot] ??
      this.#frozen.get(delivery)
    );
  }
}
