import { type OutgoingMessage, type PublishMiddleware, RustStreamError } from "@ruststream/core";
import type { KafkaPublishOptions } from "./publisher.js";

export interface RoundRobinOptions {
  /** Spread over partitions 0 to `partitions - 1`. */
  readonly partitions: number;
  /**
   * The topics it applies to. Publish middleware sees every publish of the app, those to other
   * brokers included, which would refuse a Kafka option: name the Kafka topics here.
   */
  readonly topics: readonly string[];
}

/**
 * Publish middleware that spreads records with neither a partition key nor an explicit partition
 * round robin over the first `partitions` partitions of the named topics (RustStream's
 * `RoundRobin`): replies of a keyless service then load every partition evenly. A keyed record or
 * one with its own partition passes untouched.
 *
 * `app.use({ publish: roundRobinPartitions({ partitions: 6, topics: ["receipts"] }) })`
 */
export function roundRobinPartitions(options: RoundRobinOptions): PublishMiddleware {
  const { partitions } = options;
  if (!Number.isSafeInteger(partitions) || partitions < 1) {
    throw new RustStreamError("invalid-argument", `partitions: ${partitions}; give 1 or more`);
  }
  const topics = new Set(options.topics);
  const next = new Map<string, number>();
  return (message, forward) => {
    const own = message.options as KafkaPublishOptions | undefined;
    if (
      !topics.has(message.name) ||
      message.partitionKey !== undefined ||
      own?.partition !== undefined
    ) {
      return forward(message);
    }
    const at = next.get(message.name) ?? 0;
    next.set(message.name, (at + 1) % partitions);
    // Middleware is broker-neutral (`OutgoingMessage<never>`); this one only runs on the Kafka
    // topics it was given, whose publisher reads the option.
    const routed = {
      ...message,
      options: { ...own, partition: at },
    } as unknown as OutgoingMessage;
    return forward(routed);
  };
}
