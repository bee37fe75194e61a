import type { Broker, BrokerScope, Handler } from "@ruststream/core";
import type { PatternExtras, PatternOptions } from "./patternOptions.js";

type PatternHandler = Handler<unknown, unknown, Record<never, never>>;

/**
 * Declares one pattern's subscriber with its options; a pattern with replies (`@MessagePattern`)
 * answers the message's `reply-to`.
 */
export function mountPattern(
  scope: BrokerScope<Broker>,
  pattern: string,
  options: PatternExtras,
  replies: boolean,
  handler: PatternHandler,
): void {
  const source = options.source ?? pattern;
  const codec = options.codec === undefined ? {} : { codec: options.codec };
  const subscriber =
    options.schema === undefined
      ? scope.subscriber(source, codec)
      : scope.subscriber(source, { schema: options.schema, ...codec });
  subscriber.name(pattern);
  if (options.maxAttempts !== undefined) subscriber.maxAttempts(options.maxAttempts);
  if (options.deadLetter !== undefined) subscriber.deadLetter(options.deadLetter);
  if (options.workers !== undefined || options.key !== undefined) {
    subscriber.workers(options.workers ?? 1, options.key === undefined ? {} : { key: options.key });
  }
  if (options.failure !== undefined) subscriber.onFailure(options.failure);
  if (options.prefetch !== undefined) subscriber.prefetch(options.prefetch);
  if (replies) subscriber.reply().handle(handler);
  else subscriber.handle(handler as Parameters<typeof subscriber.handle>[0]);
}

/** The strategy's defaults with the pattern's own options over them (an unset key keeps the default). */
export function mergeOptions(defaults: PatternOptions, own: PatternExtras): PatternExtras {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(own)) if (value !== undefined) merged[key] = value;
  return merged as PatternExtras;
}
