// The RabbitMQ rows (bench:rabbitmq), each run in a process of its own (../rows/rowChild.ts) on a
// quorum queue main.ts filled: the raw amqplib loop a careful user writes (one consumer, `prefetch`
// set, `JSON.parse` of each body, `ack` of each message) and the full app (a RustStream app on
// RabbitBroker reading a RabbitQuorumQueue with the same prefetch, its handler typed `Order`, decoded
// and acked by the runtime). Both timed from the first order in hand to the last one acked.
import { RustStream } from "@ruststream/core";
import { RabbitBroker, RabbitQuorumQueue } from "@ruststream/rabbitmq";
import amqp from "amqplib";
import { type Drained, Tally } from "../kafka/tally.js";
import type { Order } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";
import { settingRows } from "../rows/settingRows.js";

/** One row's run: a quorum queue holding `count` orders. */
export interface RabbitTrial {
  readonly url: string;
  readonly queue: string;
  readonly count: number;
}

/**
 * The prefetch both rows set: RabbitMQ's guide on consumer prefetch puts a single consumer's best
 * throughput in the 100-300 range; 256 is also what the runtime pulls at once (its default batch).
 * The package's own default (32) is for handlers that take their time. `raw:<n>` and `app:<n>` run
 * either row with another.
 */
export const carefulPrefetch = 256;

/** How a raw loop acks what it handled: each message, or runs of them with `multiple`. */
interface RawAcks {
  handled(message: amqp.ConsumeMessage): void;
  /** Acks what is still unacked once the last order is in hand. */
  flush(): void;
}

/** `basic.ack` of each message: what the issue names as the raw consumer. */
function ackEach(channel: amqp.Channel): RawAcks {
  return { handled: (message) => channel.ack(message), flush: () => {} };
}

/**
 * Acks batched as a careful user batches them: `ack(message, true)` (AMQP's `multiple`) on the
 * latest message once a quarter of the prefetch is unacked, and at the end of the event loop's turn
 * for the rest, so a fraction of the ack frames `ackEach` sends.
 */
function ackMultiple(channel: amqp.Channel, prefetch: number): RawAcks {
  const every = Math.max(1, Math.floor(prefetch / 4));
  let latest: amqp.ConsumeMessage | undefined;
  let unacked = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (latest === undefined) return;
    channel.ack(latest, true);
    latest = undefined;
    unacked = 0;
  };
  return {
    handled: (message) => {
      latest = message;
      if (++unacked >= every) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

async function rawLoop(
  { url, queue, count }: RabbitTrial,
  prefetch: number,
  acksOf: (channel: amqp.Channel) => RawAcks = ackEach,
): Promise<Drained> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    await channel.prefetch(prefetch);
    const tally = new Tally(count);
    const acks = acksOf(channel);
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
    // Cancelled first: a quorum queue's channel closed right after the last acks requeued some of
    // them (measured: 88 and 125 of 20,000 back in the queue); the cancel's answer follows them.
    await channel.cancel(consumerTag);
    await channel.close();
    return drained;
  } finally {
    await connection.close();
  }
}

async function fullApp({ url, queue, count }: RabbitTrial, prefetch?: number): Promise<Drained> {
  const tally = new Tally(count);
  const source = new RabbitQuorumQueue(queue, prefetch === undefined ? {} : { prefetch });
  const app = new RustStream({ name: "bench-rabbitmq", version: "0" }).broker(
    new RabbitBroker({ url }),
    (b) => {
      b.subscriber<Order>(source).handle((order) => {
        tally.add(order);
      });
    },
  );
  return drainWithApp(app, tally);
}

const settings = settingRows<RabbitTrial>("prefetch", carefulPrefetch, {
  raw: { name: (n) => `raw amqplib consume, prefetch ${n}`, run: rawLoop },
  app: { name: (n) => `full app, prefetch ${n}`, run: fullApp },
});

/**
 * `raw`, `app`, `raw:<n>` and `app:<n>` (settingRows); `app-default`: the full app with no
 * prefetch given, so the package's default shows its cost as a row of its own; `raw-multiple`:
 * the raw loop acking with `multiple`, at the careful prefetch.
 */
const ownRows: Readonly<
  Record<string, { name: string; run: (t: RabbitTrial) => Promise<Drained> }>
> = {
  "app-default": { name: "full app, the package's default prefetch", run: (t) => fullApp(t) },
  "raw-multiple": {
    name: `raw amqplib consume, prefetch ${carefulPrefetch}, acks with multiple`,
    run: (t) => rawLoop(t, carefulPrefetch, (channel) => ackMultiple(channel, carefulPrefetch)),
  },
};

export const rabbitRows = {
  name: (key: string): string => ownRows[key]?.name ?? settings.name(key),
  runRow: (key: string, trial: unknown): Promise<Drained> =>
    ownRows[key]?.run(trial as RabbitTrial) ?? settings.runRow(key, trial),
};

/** The row module's entry (../rows/protocol.ts). */
export const runRow = rabbitRows.runRow;
