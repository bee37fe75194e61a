// Brands are registered symbols, not classes: an app can load core twice (its ESM build through one
// package, its CJS build through another), and `instanceof` would then answer false for a perfectly
// good value from the other copy. `Symbol.for` is shared by every copy in the process.

/** Marks a {@link RustStreamError}. */
export const errorMark: unique symbol = Symbol.for("@ruststream/core.error");
/** Marks a broker in any state; the value is the broker's kind, for example `"memory"`. */
export const brokerMark: unique symbol = Symbol.for("@ruststream/core.broker");
/** Marks a subscription descriptor; the value is the kind of broker that understands it. */
export const sourceMark: unique symbol = Symbol.for("@ruststream/core.source");
/** Marks a publish policy; the value is the kind of broker it pairs with. */
export const policyMark: unique symbol = Symbol.for("@ruststream/core.policy");
/** Marks a delivery. */
export const deliveryMark: unique symbol = Symbol.for("@ruststream/core.delivery");

/** Capability: the subscription hands over deliveries in batches. */
export const batchesMark: unique symbol = Symbol.for("@ruststream/core.capability.batches");
/** Capability: the subscription can move to a position. */
export const seekMark: unique symbol = Symbol.for("@ruststream/core.capability.seek");
/** Capability: the publisher publishes atomically inside a transaction. */
export const transactionsMark: unique symbol = Symbol.for(
  "@ruststream/core.capability.transactions",
);
/** Capability: the publisher can send a request and wait for its correlated reply. */
export const requestMark: unique symbol = Symbol.for("@ruststream/core.capability.request");
/** Capability: the connected broker describes its server for generated docs. */
export const describeMark: unique symbol = Symbol.for("@ruststream/core.capability.describe");
/** Capability: the broker can connect to an in-process transport of its own descriptors. */
export const inProcessMark: unique symbol = Symbol.for("@ruststream/core.capability.in-process");
/** Capability: the subscription reports the messages its broker moves without handing them over. */
export const movesMark: unique symbol = Symbol.for("@ruststream/core.capability.moves");
/** Capability: the subscription answers how many messages wait in its source, by state. */
export const backlogMark: unique symbol = Symbol.for("@ruststream/core.capability.backlog");
/** Capability: the subscription reports how long each message it takes waited since it was due. */
export const waitsMark: unique symbol = Symbol.for("@ruststream/core.capability.waits");
/** Capability: the connected broker exposes what the test harness injects and inspects. */
export const testableMark: unique symbol = Symbol.for("@ruststream/core.capability.testable");

/** True when `value` carries `mark` set to `true`: how every capability guard reads a capability. */
export function hasMark(value: unknown, mark: symbol): boolean {
  return (
    typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[mark] === true
  );
}
