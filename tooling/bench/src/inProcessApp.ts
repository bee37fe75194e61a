// The full app on the memory broker, written against a core module handed in, so one run can time
// this tree's core beside an earlier one (inProcessAgainst.ts) with the same code.
import type * as Core from "@ruststream/core";

export type CoreModule = typeof Core;

interface Order {
  readonly id: number;
  readonly sku: string;
  readonly qty: number;
}

/** `messages` small JSON orders, encoded once and shared by every row. */
export function orderPayloads(core: CoreModule, messages: number): Uint8Array[] {
  return Array.from({ length: messages }, (_, id) =>
    core.json.encode({ id, sku: "apple", qty: 2 }),
  );
}

/**
 * A memory broker whose topic already holds every payload, for a group that starts at the first. The
 * broker keeps its default retention: the group holds every payload it has not settled, and the
 * replies, which nobody reads, are not all kept in memory as they would be with a retention the size
 * of the run.
 */
export async function filledBroker(
  core: CoreModule,
  topic: string,
  payloads: readonly Uint8Array[],
): Promise<Core.MemoryBroker> {
  const broker = new core.MemoryBroker();
  const connected = await broker.connect();
  // The group exists before the publishes, so it starts at the first one.
  const warm = await connected.subscribe(
    new core.MemoryTopic(topic, { group: "bench", start: "start" }),
  );
  await warm.close();
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  for (const payload of payloads) await publisher.publish({ name: topic, payload });
  await connected.shutdown();
  return broker;
}

/**
 * The full app: pull, decode, handler, (reply,) ack, through RustStream. Messages per second of
 * `now`'s milliseconds (wall time by default; the process's CPU time makes a row on a busy machine
 * count only its own work). `configure` adds to the app before it starts what a row measures
 * (metrics, tracing).
 */
export async function fullApp(
  core: CoreModule,
  payloads: readonly Uint8Array[],
  reply: boolean,
  configure?: (app: Core.RustStream) => void,
  now: () => number = () => performance.now(),
): Promise<number> {
  const messages = payloads.length;
  const broker = await filledBroker(core, "orders", payloads);
  let count = 0;
  let began = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  let sum = 0;
  const app = new core.RustStream({ name: "bench", version: "0" }).broker(broker, (b) => {
    const subscriber = b.subscriber<Order>(
      new core.MemoryTopic("orders", { group: "bench", start: "start" }),
    );
    const count1 = (order: Order) => {
      if (count === 0) began = now();
      sum += order.qty;
      if (++count === messages) finished();
    };
    if (reply) {
      subscriber.reply("receipts").handle((order) => {
        count1(order);
        return { orderId: order.id };
      });
    } else {
      subscriber.handle((order) => {
        count1(order);
      });
    }
  });
  configure?.(app);
  const running = await app.start();
  await done;
  await running.whenIdle();
  const elapsed = now() - began;
  await running.stop();
  if (sum !== messages * 2) throw new Error("lost messages");
  return (messages / elapsed) * 1000;
}

/**
 * The bare loop over the same deliveries: pull 256 at a time, as the app does, then decode, (reply,)
 * ack. Timed from its first pull to its last settle, as the app is from its first handler to idle.
 */
export async function bareLoop(
  core: CoreModule,
  payloads: readonly Uint8Array[],
  reply: boolean,
  now: () => number = () => performance.now(),
): Promise<number> {
  const messages = payloads.length;
  const broker = await filledBroker(core, "orders", payloads);
  const connected = await broker.connect();
  const subscription = await connected.subscribe(
    new core.MemoryTopic("orders", { group: "bench", start: "start" }),
  );
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  let sum = 0;
  let acks = 0;
  let seen = 0;
  const began = now();
  while (seen < messages) {
    const deliveries: readonly Core.Delivery[] = await subscription.nextBatch(256);
    seen += deliveries.length;
    let last: Promise<unknown> | undefined;
    for (const delivery of deliveries) {
      const order = core.json.decode(delivery.payload) as Order;
      sum += order.qty;
      if (reply) {
        last = publisher.publish({
          name: "receipts",
          payload: core.json.encode({ orderId: order.id }),
        });
        last.then(() => delivery.ack());
      } else if (delivery.ack() === "ok") {
        acks++;
      }
    }
    if (last !== undefined) await last;
  }
  const elapsed = now() - began;
  await connected.shutdown();
  if (sum !== messages * 2 || (!reply && acks !== messages)) throw new Error("lost messages");
  return (messages / elapsed) * 1000;
}
