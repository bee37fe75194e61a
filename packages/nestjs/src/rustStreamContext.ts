import { BaseRpcContext } from "@nestjs/microservices";
import type { Delivery, HandlerContext, Logger, ReadonlyHeaderMap } from "@ruststream/core";

type RustStreamContextArgs = [ctx: HandlerContext, pattern: string];

const utf8 = new TextDecoder();

/**
 * What a Nest handler gets from `@Ctx()` on the RustStream transport: the message's headers, key,
 * topic and attempt, as `KafkaContext` gives Kafka's.
 */
export class RustStreamContext extends BaseRpcContext<RustStreamContextArgs> {
  /** The message's headers (`correlation-id`, `reply-to`, `traceparent`, the sender's own). */
  getHeaders(): ReadonlyHeaderMap {
    return this.args[0].headers;
  }

  /** The key the message was published with, as text; undefined where it carries none. */
  getKey(): string | undefined {
    const key = this.args[0].delivery.partitionKey;
    return key === undefined ? undefined : utf8.decode(key);
  }

  /** The topic, stream or queue the message came from. */
  getTopic(): string {
    return this.args[0].name;
  }

  /** The Nest pattern whose handler runs (the topic, unless the pattern names another source). */
  getPattern(): string {
    return this.args[1];
  }

  /** Which delivery of this message this is, counting from 1 (see `maxAttempts`). */
  getAttempt(): number {
    return this.args[0].attempt;
  }

  /** The consumer group the message is read in, where the broker has one. */
  getGroup(): string | undefined {
    return this.args[0].group;
  }

  /** The broker's delivery: its position, partition, payload bytes. The runtime settles it. */
  getDelivery(): Delivery {
    return this.args[0].delivery;
  }

  /** Aborts when shutdown's drain time runs out: stop waiting and return. */
  getSignal(): AbortSignal {
    return this.args[0].signal;
  }

  /** The runtime's logger, with the subscriber's name on every line. */
  getLogger(): Logger {
    return this.args[0].log;
  }
}
