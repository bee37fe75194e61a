import type { Bindings } from "../bindings.js";
import { RustStreamError } from "../errors.js";
import { sourceMark } from "../marks.js";
import type { AddressedSource, BrokerMovesSource, RetryDeclaration } from "../source.js";

export interface MemoryTopicOptions {
  /**
   * Subscriptions with the same group share the topic's messages (competing consumers); each group
   * gets every message (fan-out). A group remembers what it has settled across subscriptions and
   * connections. Without a group each subscription is a group of its own that ends with it.
   */
  readonly group?: string;
  /**
   * Where a group created by this subscription starts: `"end"` (default) sees only later publishes,
   * `"start"` also the retained earlier ones. An existing group keeps its place.
   */
  readonly start?: "start" | "end";
  /**
   * Stands in for a partitioned topic: each delivery reports a partition from 0 to this count - 1,
   * the hash of its partition key, or its sequence spread round-robin when it has none. The topic
   * keeps one order for all of them, which is one of the orders a partitioned broker may show.
   */
  readonly partitionCount?: number;
}

/** A memory topic: fan-out to groups, competing consumers inside one; retry copies go to the topic. */
export class MemoryTopic implements AddressedSource {
  readonly [sourceMark] = "memory";
  readonly copies = "addressed" as const;
  readonly name: string;
  readonly group: string | undefined;
  readonly start: "start" | "end";
  readonly partitionCount: number | undefined;
  readonly partitions: boolean;

  constructor(name: string, options: MemoryTopicOptions = {}) {
    const count = options.partitionCount;
    if (count !== undefined && !(Number.isSafeInteger(count) && count >= 1)) {
      throw new RustStreamError(
        "invalid-argument",
        `MemoryTopic("${name}", { partitionCount: ${count} }): give a whole number, 1 or more`,
      );
    }
    this.name = name;
    this.group = options.group;
    this.start = options.start ?? "end";
    this.partitionCount = count;
    this.partitions = count !== undefined;
  }

  /** For generated docs: the group, where there is one. */
  get bindings(): Bindings | undefined {
    return this.group === undefined ? undefined : { memory: { group: this.group } };
  }

  /** A copy republished to the topic reaches this subscription's group again (and every other). */
  get redeliveryAddress(): string {
    return this.name;
  }
}

/**
 * A memory queue: one shared group over the topic, starting from the oldest retained message, whose
 * broker moves a message to a dead letter once it has been delivered `maxAttempts` times and nacked
 * again (or at once on `nack({ requeue: false })`).
 */
export class MemoryQueue implements BrokerMovesSource {
  readonly [sourceMark] = "memory";
  readonly copies = "broker" as const;
  readonly name: string;
  readonly retry: RetryDeclaration | undefined;

  constructor(name: string, retry?: RetryDeclaration) {
    this.name = name;
    this.retry = retry;
  }

  declareRetry(declaration: RetryDeclaration): MemoryQueue {
    return new MemoryQueue(this.name, declaration);
  }
}

/** Every descriptor the memory broker understands. */
export type MemorySource = MemoryTopic | MemoryQueue;
