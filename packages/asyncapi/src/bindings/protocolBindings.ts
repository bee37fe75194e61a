import type { SchemaObject } from "../document.js";

/**
 * How one protocol's facts become the bindings AsyncAPI defines for it. A descriptor states its
 * facts in its own words (`{ kafka: { groupId: "billing", commit: "tracked" } }`); the binding
 * schemas admit only their own fields, so each protocol says which facts have one, and the rest
 * stay in the operation's `x-ruststream-bindings`.
 */
export interface ProtocolBindings {
  /**
   * The channel binding of an address on this protocol's broker; `facts` are the descriptor's of
   * the subscriber that reads the channel, where one does.
   */
  channel(address: string, facts: SchemaObject | undefined): SchemaObject | undefined;
  /** The binding every message on this protocol carries. */
  message(): SchemaObject | undefined;
  /** The receive operation's binding, from the descriptor's facts. */
  operation(facts: SchemaObject): SchemaObject | undefined;
  /** The facts `operation` and `retryDestination` did not carry. */
  unmapped(facts: SchemaObject): SchemaObject | undefined;
  /** Where the descriptor sends retry copies, when it names a topic of its own for them. */
  retryDestination(facts: SchemaObject): string | undefined;
}

/** The facts minus `keys`, or `undefined` when nothing is left. */
export function without(facts: SchemaObject, keys: readonly string[]): SchemaObject | undefined {
  const rest = Object.fromEntries(Object.entries(facts).filter(([key]) => !keys.includes(key)));
  return Object.keys(rest).length === 0 ? undefined : rest;
}
