import type { PublishOptions } from "./out.js";

const replyMark: unique symbol = Symbol.for("@ruststream/core.reply");

/** A handler's reply with the options it is published with; see {@link reply}. */
export interface Reply<T, TOptions = never> {
  readonly [replyMark]: true;
  readonly value: T;
  readonly options: PublishOptions<TOptions>;
}

/**
 * A reply published with options: `return reply(receipt, { partitionKey: order.sku })`, or the
 * broker's own (`{ options: { partition: 3 } }` on Kafka). Returning the value alone is the same
 * without options.
 */
export function reply<T, TOptions = never>(
  value: T,
  options: PublishOptions<TOptions>,
): Reply<T, TOptions> {
  return { [replyMark]: true, value, options };
}

/** True for a reply built by any copy of core in this process. */
export function isReply(value: unknown): value is Reply<unknown, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [replyMark]?: unknown })[replyMark] === true
  );
}
