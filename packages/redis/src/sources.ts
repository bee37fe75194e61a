import {
  type AddressedSource,
  type NamedSource,
  type RetryDeclaration,
  RustStreamError,
} from "@ruststream/core";
import { positive, sourceMark } from "@ruststream/core/broker";
import { derivedKey } from "./client/slots.js";
import { keySuffixes } from "./names.js";

/** Where a consumer group created by a subscription starts; an existing group keeps its place. */
export type StreamStart = "new" | "beginning" | { readonly after: string };

/** The durable delayed retry of a stream: `nackAfter` parks a copy in a sorted set. */
export interface DelayedRetryOptions {
  /**
   * The sorted set (default `<stream>.delayed`; on a cluster `{<stream>}.delayed`, in the stream's
   * slot, unless the stream's name has a hash tag of its own, which the suffix then follows).
   */
  readonly key?: string;
  /** A TTL re-armed on the set at each schedule; must exceed the longest delay. None by default. */
  readonly ttlMs?: number;
}

export interface RedisStreamOptions {
  /**
   * The consumer group. Replicas of a service must share it, so it is never derived from the
   * process: give it here, else the broker's `group` option, else the connecting app's name.
   */
  readonly group?: string;
  /** This subscription's consumer name (default: unique per subscription and process). */
  readonly consumer?: string;
  /** Entries per `XREADGROUP` (`COUNT`) and the largest batch (default 64). */
  readonly count?: number;
  /** How long one `XREADGROUP` blocks, in ms (default 5000). Close and shutdown interrupt it. */
  readonly blockMs?: number;
  /** Where a group this subscription creates starts (default `"new"`: later entries only). */
  readonly start?: StreamStart;
  /**
   * Reclaim (`XAUTOCLAIM`) entries another consumer left pending longer than this, in ms, so a crashed
   * consumer's entries are not stuck. Off by default; it must exceed the longest handler run, or a
   * slow handler's entry is handled twice.
   */
  readonly reclaimIdleMs?: number;
  /** The durable delayed retry behind `nackAfter` (on by default); `false` answers `unsupported`. */
  readonly delayedRetry?: DelayedRetryOptions | false;
  /**
   * A cap the broker applies itself: a delivery past `maxAttempts` (requeued or reclaimed) goes to
   * `deadLetter` with the reason and the counts in its headers; `nack({ requeue: false })` goes there
   * too. Both or neither; without them the runtime's own cap applies.
   */
  readonly retry?: RetryDeclaration;
}

function nonEmpty(what: string, value: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new RustStreamError("invalid-argument", `${what} cannot be empty: give it a name`);
  }
  return value;
}

/**
 * A Redis stream read through a consumer group: competing consumers inside the group, every group
 * gets every entry. Retry copies go back to the stream itself.
 */
export class RedisStream implements AddressedSource {
  readonly [sourceMark] = "redis";
  readonly copies = "addressed" as const;
  readonly transport = "stream" as const;
  readonly name: string;
  readonly group: string | undefined;
  readonly consumer: string | undefined;
  readonly count: number;
  readonly blockMs: number;
  readonly start: StreamStart;
  readonly reclaimIdleMs: number | undefined;
  /** The delayed retry, with its set's key when one was given (else derived: see `keys`). */
  readonly delayedRetry: { readonly key?: string; readonly ttlMs?: number } | undefined;
  readonly retry: RetryDeclaration | undefined;

  constructor(key: string, options: RedisStreamOptions = {}) {
    this.name = nonEmpty("a Redis stream key", key);
    this.group = options.group === undefined ? undefined : nonEmpty("group", options.group);
    this.consumer =
      options.consumer === undefined ? undefined : nonEmpty("consumer", options.consumer);
    this.count = positive("count", options.count, 64);
    this.blockMs = positive("blockMs", options.blockMs, 5000);
    this.start = options.start ?? "new";
    this.reclaimIdleMs =
      options.reclaimIdleMs === undefined
        ? undefined
        : positive("reclaimIdleMs", options.reclaimIdleMs, 1);
    const delayed = options.delayedRetry;
    if (delayed !== undefined && delayed !== false && delayed.key !== undefined) {
      nonEmpty("delayedRetry.key", delayed.key);
    }
    this.delayedRetry = delayed === false ? undefined : { ...delayed };
    const retry = options.retry;
    if (
      retry !== undefined &&
      (retry.maxAttempts === undefined) !== (retry.deadLetter === undefined)
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `the retry declared on stream "${key}" has only ${retry.maxAttempts === undefined ? "deadLetter" : "maxAttempts"}: declare both maxAttempts and deadLetter, or neither`,
      );
    }
    if (retry?.maxAttempts !== undefined) positive("maxAttempts", retry.maxAttempts, 1);
    this.retry = retry?.maxAttempts === undefined ? undefined : retry;
  }

  /** A copy appended to the stream reaches the group again. */
  get redeliveryAddress(): string {
    return this.name;
  }

  /**
   * The keys this stream uses on a deployment: the stream, and its delayed-retry set (none when the
   * delayed retry is off). On a cluster the derived set is named into the stream's slot, so parking a
   * retry and acking the original stay one transaction.
   */
  keys(cluster: boolean): { readonly stream: string; readonly delayed: string | undefined } {
    const delayed = this.delayedRetry;
    return {
      stream: this.name,
      delayed:
        delayed === undefined
          ? undefined
          : (delayed.key ?? derivedKey(this.name, keySuffixes.delayed, cluster)),
    };
  }

  /** The same descriptor with the group set: what a bare name becomes on a broker with a group. */
  withGroup(group: string): RedisStream {
    return new RedisStream(this.name, { ...this.#options(), group });
  }

  #options(): RedisStreamOptions {
    return {
      ...(this.group === undefined ? {} : { group: this.group }),
      ...(this.consumer === undefined ? {} : { consumer: this.consumer }),
      count: this.count,
      blockMs: this.blockMs,
      start: this.start,
      ...(this.reclaimIdleMs === undefined ? {} : { reclaimIdleMs: this.reclaimIdleMs }),
      delayedRetry: this.delayedRetry ?? false,
      ...(this.retry === undefined ? {} : { retry: this.retry }),
    };
  }
}

export interface RedisListOptions {
  /**
   * The processing list entries move into while a consumer holds them (default `<key>.processing`;
   * on a cluster `{<key>}.processing`, in the queue's slot, unless the key has a hash tag of its own,
   * which the suffix then follows).
   */
  readonly processing?: string;
  /**
   * Return entries a dead consumer left in the processing list once they have been held longer than
   * this, in ms. Off by default; it must exceed the longest handler run.
   */
  readonly recoveryIdleMs?: number;
  /** The sorted set of claim times recovery reads (default `<key>.recovery`, derived as `processing`). */
  readonly recoveryKey?: string;
  /** How long one wait on an empty queue blocks, in ms (default 5000). Close and shutdown interrupt it. */
  readonly blockMs?: number;
  /**
   * The most values one batch pull moves into processing (one script, one round trip) and the
   * largest batch (default 64). A consumer that dies holding them leaves them all to recovery.
   */
  readonly count?: number;
}

/**
 * A reliable Redis list used as a work queue: each entry goes to exactly one consumer, moved into a
 * processing list until it is settled (a script of `LMOVE`s that also claims them, then `LREM`). No
 * fan-out, no replay.
 */
export class RedisList implements AddressedSource {
  readonly [sourceMark] = "redis";
  readonly copies = "addressed" as const;
  readonly transport = "list" as const;
  readonly name: string;
  /** The processing list, when one was given (else derived: see `keys`). */
  readonly processing: string | undefined;
  readonly recoveryIdleMs: number | undefined;
  /** The recovery set, when one was given (else derived: see `keys`). */
  readonly recoveryKey: string | undefined;
  readonly blockMs: number;
  readonly count: number;

  constructor(key: string, options: RedisListOptions = {}) {
    this.name = nonEmpty("a Redis list key", key);
    this.processing =
      options.processing === undefined ? undefined : nonEmpty("processing", options.processing);
    if (this.processing === key) {
      throw new RustStreamError(
        "invalid-argument",
        `the processing list of "${key}" is the list itself: give processing another key`,
      );
    }
    this.recoveryIdleMs =
      options.recoveryIdleMs === undefined
        ? undefined
        : positive("recoveryIdleMs", options.recoveryIdleMs, 1);
    this.recoveryKey =
      options.recoveryKey === undefined ? undefined : nonEmpty("recoveryKey", options.recoveryKey);
    this.blockMs = positive("blockMs", options.blockMs, 5000);
    this.count = positive("count", options.count, 64);
  }

  /** A copy pushed onto the list reaches a consumer again. */
  get redeliveryAddress(): string {
    return this.name;
  }

  /**
   * The keys this list uses on a deployment: the queue, its processing list and its recovery set.
   * Its scripts touch all three, so on a cluster the derived ones are named into the queue's slot;
   * a subscription on a cluster refuses keys given in other slots.
   */
  keys(cluster: boolean): {
    readonly queue: string;
    readonly processing: string;
    readonly recovery: string;
  } {
    return {
      queue: this.name,
      processing: this.processing ?? derivedKey(this.name, keySuffixes.processing, cluster),
      recovery: this.recoveryKey ?? derivedKey(this.name, keySuffixes.recovery, cluster),
    };
  }
}

/**
 * A Redis Pub/Sub channel: fire-and-forget, every subscriber gets what is published while it is
 * connected and nothing else; ack and requeue are `unsupported`.
 */
export class RedisPubSub implements AddressedSource {
  readonly [sourceMark] = "redis";
  readonly copies = "addressed" as const;
  readonly transport = "pubsub" as const;
  readonly name: string;

  constructor(channel: string) {
    this.name = nonEmpty("a Redis channel", channel);
  }

  get redeliveryAddress(): string {
    return this.name;
  }
}

/** Pub/Sub on a glob pattern (`PSUBSCRIBE`): copies have no single address, so a mount names one. */
export class RedisPubSubPattern implements NamedSource {
  readonly [sourceMark] = "redis";
  readonly copies = "named" as const;
  readonly transport = "pubsub" as const;
  readonly name: string;

  constructor(pattern: string) {
    this.name = nonEmpty("a Redis channel pattern", pattern);
  }
}

/** Every descriptor the Redis broker understands. */
export type RedisSource = RedisStream | RedisList | RedisPubSub | RedisPubSubPattern;
