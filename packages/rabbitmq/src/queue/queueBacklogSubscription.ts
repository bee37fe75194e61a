import { type BacklogCounts, isRustStreamError, RustStreamError } from "@ruststream/core";
import { backlogMark, type ReportsBacklog } from "@ruststream/core/broker";
import type { RabbitHost } from "../host.js";
import { QueueSubscription, type QueueSubscriptionOptions } from "./queueSubscription.js";

/**
 * A subscription to a classic or quorum queue, which answers its backlog (core's `ReportsBacklog`)
 * from passive declares on a channel of their own: the queue's ready messages, those in the wait
 * queues of its delayed retries this connection declared (`scheduled`), and those in the dead
 * letter a quorum queue declares. No `leased`: AMQP tells no queue's unacked count, and what this
 * subscription holds is not what every replica holds. A stream has none: its count is its length.
 */
export class QueueBacklogSubscription extends QueueSubscription implements ReportsBacklog {
  readonly [backlogMark] = true as const;

  static async open(
    host: RabbitHost,
    options: QueueSubscriptionOptions,
  ): Promise<QueueBacklogSubscription> {
    const subscription = new QueueBacklogSubscription(host, options);
    await subscription.consumeWith(options.arguments);
    return subscription;
  }

  /**
   * One passive declare for the queue, one for each wait queue of it this connection declared, one
   * for the dead letter where the queue declares one (`backlog` in the README's Metrics). Rejects
   * naming the queue the server no longer has; the consumer goes on.
   */
  async backlog(): Promise<BacklogCounts> {
    const waits = this.host.waitQueuesOf(this.name);
    const deadLetter = this.cap?.deadLetter;
    const queues = [this.name, ...waits, ...(deadLetter === undefined ? [] : [deadLetter])];
    let counts: readonly number[];
    try {
      counts = await this.host.link.queueCounts(queues);
    } catch (error) {
      throw new RustStreamError(
        isRustStreamError(error) ? error.code : "broker-failure",
        `reading the backlog of queue "${this.name}": ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const [ready = 0, ...rest] = counts;
    const scheduled = rest.slice(0, waits.length).reduce((sum, n) => sum + n, 0);
    return {
      ready,
      ...(waits.length === 0 ? {} : { scheduled }),
      ...(deadLetter === undefined ? {} : { "dead-lettered": rest[waits.length] ?? 0 }),
    };
  }
}
