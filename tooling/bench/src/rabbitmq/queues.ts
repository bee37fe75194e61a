// The queues both the bench's main and its profiled rows drain, a quorum queue or a classic one by
// the row's key: declared as RabbitQuorumQueue or RabbitQueue declares it, filled with orders
// 0..count-1 through a confirm channel (untimed), and after a drain checked empty, with no
// consumer, and deleted.
import type { ConfirmChannel } from "amqplib";
import { orderPayload } from "../redis/drain/order.js";

/** Publishes outstanding before the fill waits for their confirms. */
const fillWindow = 2_000;

/** How long the queue's counts may take to show the row's last acks (they reach the queue's log). */
const settleMs = 10_000;

/** The queue types a row drains. */
export type QueueType = "quorum" | "classic";

/**
 * What a row's key names: the row, on a quorum queue (`<row>`) or a classic one (`<row>@classic`),
 * and for `app@<ref>` the git ref whose `@ruststream/rabbitmq` the app runs (`app@<ref>@classic`).
 */
export function queueOfKey(key: string): {
  readonly row: string;
  readonly type: QueueType;
  readonly ref: string | undefined;
} {
  const parts = key.split("@");
  const last = parts[parts.length - 1];
  const type = last === "classic" || last === "quorum" ? last : "quorum";
  if (parts.length > 1 && (last === "classic" || last === "quorum")) parts.pop();
  const [row = "", ref, ...more] = parts;
  if (more.length > 0 || (ref !== undefined && row !== "app")) {
    throw new Error(`unknown row "${key}": <row>, <row>@classic, app@<ref> or app@<ref>@classic`);
  }
  return { row, type, ref };
}

/** Declares `queue` of `type` and fills it with `count` persistent orders. */
export async function fillQueue(
  confirms: ConfirmChannel,
  queue: string,
  count: number,
  type: QueueType,
): Promise<void> {
  // As RabbitQuorumQueue(queue) or RabbitQueue(queue) declares it (durable, its type named), so
  // the app's check of the topology finds it equal.
  await confirms.assertQueue(queue, { durable: true, arguments: { "x-queue-type": type } });
  for (let i = 0; i < count; i++) {
    confirms.sendToQueue(queue, orderPayload(i), { persistent: true });
    if ((i + 1) % fillWindow === 0) await confirms.waitForConfirms();
  }
  await confirms.waitForConfirms();
}

/** Waits until `queue` holds no message and no consumer (every order acked), then deletes it. */
export async function expectDrained(
  confirms: ConfirmChannel,
  queue: string,
  where: string,
): Promise<void> {
  // The row has ended, so a message it did not ack is ready again; the quorum queue's count reads
  // its state as the log has applied it, which may lag the last acks a moment.
  const deadline = performance.now() + settleMs;
  for (;;) {
    const { messageCount, consumerCount } = await confirms.checkQueue(queue);
    if (messageCount === 0 && consumerCount === 0) break;
    if (performance.now() > deadline) {
      throw new Error(
        `${where}: ${queue} holds ${messageCount} messages, ${consumerCount} consumers`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await confirms.deleteQueue(queue);
}
