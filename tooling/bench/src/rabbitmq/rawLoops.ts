// The raw loops a careful user writes, one per client library: one consumer, `prefetch` set, each
// body decoded with `JSON.parse`, acked by the strategy given (rawAcks.ts); timed from the first
// order in hand to the last one handled. At the end the consumer is cancelled before the channel
// closes: a quorum queue's channel closed right after the last acks requeued some of them
// (measured on amqplib: 88 and 125 of 20,000 back in the queue); the cancel's answer follows them.
import { AMQPClient } from "@cloudamqp/amqp-client";
import amqp from "amqplib";
import { type Drained, Tally } from "../kafka/tally.js";
import type { Order } from "../redis/drain/order.js";
import type { AckStrategy } from "./rawAcks.js";

/** One drain: a queue holding `count` orders. */
export interface Drain {
  readonly url: string;
  readonly queue: string;
  readonly count: number;
}

/** amqplib: `channel.consume`, `message.content.toString("utf8")`, `channel.ack`. */
export async function amqplibLoop(
  { url, queue, count }: Drain,
  prefetch: number,
  acking: AckStrategy,
): Promise<Drained> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.prefetch(prefetch);
    const tally = new Tally(count);
    const acks = acking<amqp.ConsumeMessage>((m, multiple) => channel.ack(m, multiple), prefetch);
    const { consumerTag } = await channel.consume(
      queue,
      (message) => {
        if (message === null) return;
        tally.add(JSON.parse(message.content.toString("utf8")) as Order);
        acks.handled(message);
      },
      { noAck: false },
    );
    await tally.done;
    acks.flush();
    const drained = tally.drained();
    await channel.cancel(consumerTag);
    await channel.close();
    return drained;
  } finally {
    await connection.close();
  }
}

/**
 * @cloudamqp/amqp-client: `basicConsume` with a callback, `message.bodyToString()`, and
 * `message.ack()` (its promise resolves once the frame is written; the loop does not wait on it, as
 * amqplib's `ack` returns nothing to wait on).
 */
export async function cloudamqpLoop(
  { url, queue, count }: Drain,
  prefetch: number,
  acking: AckStrategy,
): Promise<Drained> {
  const connection = await new AMQPClient(url).connect();
  try {
    const channel = await connection.channel();
    await channel.prefetch(prefetch);
    const tally = new Tally(count);
    const failed: unknown[] = [];
    const acks = acking<{ ack(multiple: boolean): Promise<void> }>(
      (m, multiple) => void m.ack(multiple).catch((error: unknown) => failed.push(error)),
      prefetch,
    );
    const consumer = await channel.basicConsume(queue, { noAck: false }, (message) => {
      tally.add(JSON.parse(message.bodyToString() ?? "") as Order);
      acks.handled(message);
    });
    await tally.done;
    acks.flush();
    const drained = tally.drained();
    await channel.basicCancel(consumer.tag);
    await channel.close();
    if (failed.length > 0) throw new Error(`${failed.length} acks failed: ${String(failed[0])}`);
    return drained;
  } finally {
    await connection.close();
  }
}
