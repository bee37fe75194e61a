// The rows of @ruststream/kafka: the broker alone (a subscription pulled in batches, each delivery
// decoded with core's JSON codec and acked), and the full app (a RustStream app whose subscriber is
// typed `Order`, decoded by the runtime's JSON codec, acked by the runtime).
import { json, RustStream } from "@ruststream/core";
import { KafkaBroker, type KafkaEngineName, KafkaTopic } from "@ruststream/kafka";
import type { Order } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";
import type { Row } from "./rawRows.js";
import { Tally } from "./tally.js";

export type CommitMode = "auto" | "tracked";

/** Deliveries per pull of the broker-alone row: the runtime's default batch. */
const pullMax = 256;

export function brokerAlone(engine: KafkaEngineName, commit: CommitMode): Row {
  return async ({ brokers, topic, group, count }) => {
    const connected = await new KafkaBroker({ brokers, engine }).connect();
    const subscription = await connected.subscribe(
      new KafkaTopic(topic, { group, commit, start: "earliest" }),
    );
    const tally = new Tally(count);
    while (tally.seen < count) {
      for (const delivery of await subscription.nextBatch(pullMax)) {
        tally.add(json.decode(delivery.payload) as Order);
        delivery.ack();
      }
    }
    const drained = tally.drained();
    const closed = await connected.shutdown();
    if (closed.returnedDeliveries !== 0) {
      throw new Error(`broker alone: ${closed.returnedDeliveries} deliveries left unsettled`);
    }
    return drained;
  };
}

/**
 * The full app; `configure` adds to the app before it starts what a row measures (tracing, in the
 * operations bench's drains).
 */
export function fullApp(
  engine: KafkaEngineName,
  commit: CommitMode,
  configure?: (app: RustStream) => void,
): Row {
  return async ({ brokers, topic, group, count }) => {
    const tally = new Tally(count);
    const app = new RustStream({ name: group, version: "0" }).broker(
      new KafkaBroker({ brokers, engine }),
      (b) => {
        b.subscriber<Order>(new KafkaTopic(topic, { group, commit, start: "earliest" })).handle(
          (order) => {
            tally.add(order);
          },
        );
      },
    );
    configure?.(app);
    return drainWithApp(app, tally);
  };
}
