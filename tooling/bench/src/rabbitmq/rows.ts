// The RabbitMQ rows (bench:rabbitmq), each run in a process of its own (../rows/rowChild.ts) on a
// queue main.ts filled: the raw loops a careful user writes on amqplib and on
// @cloudamqp/amqp-client (rawLoops.ts), and the full app (a RustStream app on RabbitBroker reading
// a RabbitQuorumQueue or a RabbitQueue with the same prefetch, its handler typed `Order`, decoded
// and acked by the runtime). All timed from the first order in hand to the last one acked. A key
// names a row on a quorum queue; `<key>@classic` the same row on a classic queue.
import { RustStream } from "@ruststream/core";
import * as thisTree from "@ruststream/rabbitmq";
import { type Drained, Tally } from "../kafka/tally.js";
import { packageAt } from "../packageAt.js";
import type { Order } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";
import { settingRows } from "../rows/settingRows.js";
import { type QueueType, queueOfKey } from "./queues.js";
import { ackEach, ackMultiple } from "./rawAcks.js";
import { amqplibLoop, cloudamqpLoop, type Drain } from "./rawLoops.js";

/** One row's run: a queue of `type` holding `count` orders. */
export interface RabbitTrial extends Drain {
  readonly type: QueueType;
}

/**
 * The prefetch every row sets: RabbitMQ's guide on consumer prefetch puts a single consumer's best
 * throughput in the 100-300 range; 256 is also what the runtime pulls at once (its default batch)
 * and the package's default. `raw:<n>` and `app:<n>` run either row with another.
 */
export const carefulPrefetch = 256;

type RabbitModule = typeof thisTree;

async function fullApp(
  trial: RabbitTrial,
  prefetch?: number,
  rabbit: RabbitModule = thisTree,
): Promise<Drained> {
  const tally = new Tally(trial.count);
  const options = prefetch === undefined ? {} : { prefetch };
  const source =
    trial.type === "classic"
      ? new rabbit.RabbitQueue(trial.queue, options)
      : new rabbit.RabbitQuorumQueue(trial.queue, options);
  const app = new RustStream({ name: "bench-rabbitmq", version: "0" }).broker(
    new rabbit.RabbitBroker({ url: trial.url }),
    (b) => {
      b.subscriber<Order>(source).handle((order) => {
        tally.add(order);
      });
    },
  );
  return drainWithApp(app, tally);
}

const settings = settingRows<RabbitTrial>("prefetch", carefulPrefetch, {
  raw: {
    name: (n) => `raw amqplib consume, prefetch ${n}`,
    run: (t, n) => amqplibLoop(t, n, ackEach),
  },
  app: { name: (n) => `full app, prefetch ${n}`, run: fullApp },
});

/**
 * `raw`, `app`, `raw:<n>` and `app:<n>` (settingRows); `app-default`: the full app with no
 * prefetch given, so the package's default shows as a row of its own; `raw-multiple`: the amqplib
 * loop acking with `multiple`; `cloudamqp` and `cloudamqp-multiple`: the same two loops on
 * @cloudamqp/amqp-client; all at the careful prefetch.
 */
const ownRows: Readonly<
  Record<string, { name: string; run: (t: RabbitTrial) => Promise<Drained> }>
> = {
  "app-default": { name: "full app, the package's default prefetch", run: (t) => fullApp(t) },
  "raw-multiple": {
    name: `raw amqplib consume, prefetch ${carefulPrefetch}, acks with multiple`,
    run: (t) => amqplibLoop(t, carefulPrefetch, ackMultiple),
  },
  cloudamqp: {
    name: `raw @cloudamqp/amqp-client consume, prefetch ${carefulPrefetch}`,
    run: (t) => cloudamqpLoop(t, carefulPrefetch, ackEach),
  },
  "cloudamqp-multiple": {
    name: `raw @cloudamqp/amqp-client consume, prefetch ${carefulPrefetch}, acks with multiple`,
    run: (t) => cloudamqpLoop(t, carefulPrefetch, ackMultiple),
  },
};

/**
 * Every row by its key; `app@<ref>` is the full app on `@ruststream/rabbitmq` as it was at that git
 * ref (../packageAt.ts, this tree's core and amqplib), for a change measured before and after in one
 * interleaved run.
 */
export const rabbitRows = {
  name: (key: string): string => {
    const { row, type, ref } = queueOfKey(key);
    const name =
      ref === undefined
        ? (ownRows[row]?.name ?? settings.name(row))
        : `full app at ${ref}, prefetch ${carefulPrefetch}`;
    return type === "classic" ? `${name}, classic queue` : name;
  },
  runRow: async (key: string, trial: unknown): Promise<Drained> => {
    const { row, ref } = queueOfKey(key);
    if (ref !== undefined) {
      const { module } = await packageAt<RabbitModule>("rabbitmq", ref);
      return fullApp(trial as RabbitTrial, carefulPrefetch, module);
    }
    return ownRows[row]?.run(trial as RabbitTrial) ?? settings.runRow(row, trial);
  },
};

/** The row module's entry (../rows/protocol.ts). */
export const runRow = rabbitRows.runRow;
