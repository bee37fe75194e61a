import type { Backlog } from "@ruststream/core/broker";

const notBuiltMark: unique symbol = Symbol.for("ruststream.conformance.notBuilt");

/**
 * A capability the broker does not offer yet but could: its server has it, or a faithful way to it
 * exists, and this package has not built it. Owed work, unlike `false` (the broker cannot). Made by
 * {@link notBuilt}.
 */
export interface NotBuilt {
  readonly [notBuiltMark]: true;
  /** What is missing, shown in the name of every scenario it skips. */
  readonly reason: string;
}

/**
 * Declares a capability not built yet, saying what is missing:
 * `transactions: notBuilt("Pulsar has them; our wire client has no transaction coordinator yet")`.
 * Like `false`, the broker must answer as if it had none; its scenarios are skipped as owed work.
 */
export function notBuilt(reason: string): NotBuilt {
  if (typeof reason !== "string" || reason.trim() === "") {
    throw new TypeError("notBuilt(reason) needs a reason: say what is missing");
  }
  return Object.freeze({ [notBuiltMark]: true as const, reason });
}

/** Whether `value` is a {@link notBuilt} declaration. */
export function isNotBuilt(value: unknown): value is NotBuilt {
  return typeof value === "object" && value !== null && Object.hasOwn(value, notBuiltMark);
}

/**
 * One yes-or-no declaration: `true` (the broker does it), `false` (the broker cannot: its server or
 * its mode has no way to), or {@link notBuilt} (it could, and this package has not built it yet).
 */
export type Declared = boolean | NotBuilt;

/**
 * What a broker says its source and publisher do, declared once per kind of source in its test file.
 * The suites read it instead of discovering it: a scenario for a capability declared absent is
 * registered as skipped, with the kind of absence and the reason in its name, and the `declared
 * capabilities` scenario fails a broker whose answers differ from its declaration in either
 * direction (a capability not built yet must answer as absent too).
 */
export interface Capabilities {
  /** Whether a new subscription receives what was published before it opened. */
  readonly backlog: Backlog;
  /** `ack()` answers `ok` (a commit, a stored position), not `unsupported`. */
  readonly ack: Declared;
  /** `nack({ requeue: false })` answers `ok`: the message is gone for good. */
  readonly drop: Declared;
  /** `nack({ requeue: true })` answers `ok`: a promise that the same message comes back. */
  readonly requeue: Declared;
  /** `nackAfter(ms)` answers `ok`: the message comes back, no sooner than `ms`. */
  readonly delayedRequeue: Declared;
  /**
   * A new client of the same subject picks up where the last one left: what it settled stays gone,
   * what it left unsettled comes back (a consumer group, a stored position). Declared absent, what
   * a client left unsettled never reaches the next one.
   */
  readonly durable: Declared;
  /** Deliveries report the partition key they were published with; declared absent, none. */
  readonly partitionKey: Declared;
  /** Subscriptions hand over deliveries in batches (`supportsBatches`). */
  readonly batches: Declared;
  /** Subscriptions seek to a stored position (`supportsSeek`). */
  readonly seek: Declared;
  /** The publisher publishes atomically (`supportsTransactions`). */
  readonly transactions: Declared;
  /** The publisher sends requests and waits for their replies (`supportsRequest`). */
  readonly request: Declared;
  /**
   * A delivery handed out before its subscription closed still settles after the close, while the
   * connection is open (an app's graceful stop closes its subscriptions, then drains the handlers):
   * an ack then lands, and a new client of the same source reads it no more, while what was never
   * handed out still comes to it. Needs `ack` and `durable`; declared absent with either.
   */
  readonly settleAfterClose: Declared;
}

/** The capabilities a scenario can need: every yes-or-no declaration. */
export type Capability = {
  [K in keyof Capabilities]: Capabilities[K] extends Declared ? K : never;
}[keyof Capabilities];

const capabilityNames = [
  "ack",
  "drop",
  "requeue",
  "delayedRequeue",
  "durable",
  "partitionKey",
  "batches",
  "seek",
  "transactions",
  "request",
  "settleAfterClose",
] as const satisfies readonly Capability[];

/** Whether the broker declares it does `capability` now (`true`; not `false`, not `notBuilt`). */
export function has(declared: Capabilities, capability: Capability): boolean {
  return declared[capability] === true;
}

/**
 * Why a scenario does not run, of two kinds the tally counts apart: `cannot` (declared `false`) and
 * `notBuilt` (declared {@link notBuilt}: owed work).
 */
export interface Absence {
  readonly kind: "cannot" | "notBuilt";
  /** The capabilities missing, each not built yet with its reason. */
  readonly what: string;
}

/**
 * Why a scenario needing `needs` does not run under `declared`, or `undefined` when it runs. Where
 * both kinds apply, `notBuilt` wins: it is the one owed, and only its capabilities are named.
 */
export function absence(
  needs: readonly Capability[] | undefined,
  declared: Capabilities,
): Absence | undefined {
  const absent = (needs ?? []).filter((need) => !has(declared, need));
  if (absent.length === 0) return undefined;
  const owed = absent.flatMap((need) => {
    const value = declared[need];
    return isNotBuilt(value) ? [`${need} (${value.reason})`] : [];
  });
  if (owed.length > 0) return { kind: "notBuilt", what: owed.join(", ") };
  return { kind: "cannot", what: absent.join(", ") };
}

const kindWords: Record<Absence["kind"], string> = {
  cannot: "the broker cannot",
  notBuilt: "not built yet",
};

/**
 * The name a skipped test is registered under: `<name> (skipped, the broker cannot: <what>)` or
 * `<name> (skipped, not built yet: <what>)`, the two forms the closing tally counts apart. Tests
 * outside the suites that skip for the same reasons use it too.
 */
export function skippedName(name: string, why: Absence): string {
  return `${name} (skipped, ${kindWords[why.kind]}: ${why.what})`;
}

/**
 * Throws, naming the fix, unless `value` is a whole declaration: an untyped caller gets past the
 * type, and a suite without one would test nothing it names.
 */
export function checkCapabilities(value: unknown): asserts value is Capabilities {
  const fix =
    'declare what the source and publisher do: backlog ("delivered" or "missed") and, each ' +
    "true, false (the broker cannot) or notBuilt(reason) (not built yet), " +
    capabilityNames.join(", ");
  if (typeof value !== "object" || value === null) {
    throw new TypeError(`conformance factories need \`capabilities\`: ${fix}`);
  }
  const record = value as Record<string, unknown>;
  if (record.backlog !== "delivered" && record.backlog !== "missed") {
    throw new TypeError(`capabilities.backlog is ${String(record.backlog)}: ${fix}`);
  }
  for (const name of capabilityNames) {
    const declared = record[name];
    if (typeof declared !== "boolean" && !isNotBuilt(declared)) {
      throw new TypeError(`capabilities.${name} is ${String(declared)}: ${fix}`);
    }
  }
}
