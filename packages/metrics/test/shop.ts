// The app both Prometheus tests run, and the traffic they send it, so the counts every series must
// show are known before the run: orders that succeed, fail until they are dead-lettered, are dropped,
// or do not decode, and the receipts the good ones publish, read by a second subscriber.
import {
  type Broker,
  bytes,
  drop,
  type RunningApp,
  RustStream,
  type Source,
} from "@ruststream/core";

export interface Shop {
  readonly app: RustStream;
  /** Sends the known traffic and resolves once the app has handled all of it. */
  traffic(running: RunningApp): Promise<void>;
}

export const good = 10;
export const poison = 2;
export const dropped = 1;
export const malformed = 3;
export const maxAttempts = 3;

interface Order {
  readonly id: number;
  readonly qty: number;
}

/** The app on `broker`, its orders read from `orders` and its receipts from `receipts`. */
export function shop(
  broker: Broker,
  orders: string | Source,
  receipts: string | Source,
  names: { readonly orders: string; readonly receipts: string; readonly dlq: string },
): Shop {
  let audited = 0;
  let settledOrders = 0;
  let wake: () => void = () => {};
  const progressed = () => wake();
  const app = new RustStream({ name: "shop", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<Order>(orders as string)
      .name("orders")
      .reply<{ orderId: number }>(names.receipts)
      .maxAttempts(maxAttempts)
      .deadLetter(names.dlq)
      .onFailure({ backoff: { initialMs: 5, maxMs: 20 } })
      .handle((order) => {
        if (order.qty < 0) throw new Error(`order ${order.id}: negative quantity`);
        if (order.qty === 0) return drop();
        return { orderId: order.id };
      });
    b.subscriber<{ orderId: number }>(receipts as string)
      .name("audit")
      .handle(() => {
        audited++;
        progressed();
      });
  });
  app.observe((event) => {
    if (event.type === "outcome" && event.subscriber === "orders") {
      if (event.outcome !== "retry" && event.outcome !== "retry-after") settledOrders++;
      progressed();
    }
  });
  return {
    app,
    async traffic(running) {
      let id = 0;
      for (let i = 0; i < good; i++) await running.publish(names.orders, { id: id++, qty: 2 });
      for (let i = 0; i < poison; i++) await running.publish(names.orders, { id: id++, qty: -1 });
      for (let i = 0; i < dropped; i++) await running.publish(names.orders, { id: id++, qty: 0 });
      for (let i = 0; i < malformed; i++) {
        await running.publish(names.orders, new TextEncoder().encode("{not json"), {
          codec: bytes,
        });
      }
      const total = good + poison + dropped + malformed;
      const deadline = Date.now() + 20_000;
      while (settledOrders < total || audited < good) {
        if (Date.now() > deadline) {
          throw new Error(
            `the shop handled ${settledOrders} of ${total} orders, audited ${audited}`,
          );
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
      await running.whenIdle();
    },
  };
}

/** What every series must read after the traffic: each known count, worked out. */
export function expectedCounts(names: {
  readonly orders: string;
  readonly receipts: string;
  readonly dlq: string;
}) {
  const retries = poison * (maxAttempts - 1);
  const deadLetters = poison + malformed; // decode failures are dead-lettered where one is declared
  return {
    consumed: {
      "orders ack": good,
      "orders nack": retries + poison + dropped + malformed,
      "audit ack": good,
      "audit nack": 0,
    },
    settled: {
      "orders ack": good,
      "orders retry-after": retries,
      "orders dead-letter": deadLetters,
      "orders drop": dropped,
      "audit ack": good,
    },
    // Every handler run; the payloads that did not decode never reached one.
    durationCount: { orders: good + poison * maxAttempts + dropped, audit: good },
    published: {
      [`${names.orders} ok`]: good + poison + dropped + malformed,
      [`${names.receipts} ok`]: good,
      [`${names.dlq} ok`]: deadLetters,
    },
    redeliveries: { orders: retries, audit: 0 },
    decodeFailures: { orders: malformed, audit: 0 },
    deadLetters: { [`orders ${names.dlq}`]: deadLetters },
  };
}
