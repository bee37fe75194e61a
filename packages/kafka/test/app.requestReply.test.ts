import { headerNames, out, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { sleep, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type KafkaBroker, KafkaTopic } from "../src/index.js";
import { brokerFor, everywhere, type Where } from "./connections.js";
import { itTransactional } from "./transactionalSkips.js";

// Request/reply through the apps' runtime: a shop app asks a pricing app, both on one Kafka, with
// `running.request` and with `ctx.out.pricing.request` from a handler; the pricing handler's
// `.reply()` answers each request's reply-to (the shop connection's inbox topic) with its
// correlation id. On both engines against the cluster, and in-process (the two apps on one
// stand-in). Under commit "transactional" a handler's request goes out at once, not staged for a
// window that waits for the handler (librdkafka and in-process; kafkajs refuses the mode, so there
// the test is registered as skipped, not built yet: transactionalSkips.ts).

interface Ask {
  readonly sku: string;
  readonly qty: number;
}
interface Quote {
  readonly sku: string;
  readonly price: number;
}
interface Order extends Ask {
  readonly id: number;
}

const timeoutMs = 20_000;
let started: TestApp[] = [];
afterEach(async () => {
  // The shop first: its handlers wait on the pricing app's replies.
  for (const t of started.reverse()) await t.stop();
  started = [];
});

async function start(where: Where, app: RustStream): Promise<TestApp> {
  const t =
    where === "in-process"
      ? await TestApp.start(app)
      : await TestApp.startLive(app, { withinMs: 30_000 });
  started.push(t);
  return t;
}

/** Prices `qty` of a sku at 3 each, remembering the reply-to and correlation id each request had. */
function pricing(
  broker: KafkaBroker,
  prices: string,
  asked: Array<[string | undefined, string | undefined]>,
) {
  return new RustStream({ name: uniqueName("pricing"), version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber(prices)
      .reply<Quote>()
      .handle((message, ctx) => {
        const ask = message as Ask;
        asked.push([
          ctx.delivery.headers.getString(headerNames.replyTo),
          ctx.delivery.headers.getString(headerNames.correlationId),
        ]);
        return { sku: ask.sku, price: ask.qty * 3 };
      });
  });
}

/** Takes orders, asks pricing from the handler, and replies with the total to `receipts`. */
function shop(broker: KafkaBroker, orders: KafkaTopic, prices: string, receipts: string) {
  return new RustStream({ name: uniqueName("shop"), version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber(orders)
      .publishes({ pricing: out<Ask>(prices) })
      .reply<{ orderId: number; total: number }>(receipts)
      .handle(async (message, ctx) => {
        const order = message as Order;
        const quote = (await ctx.out.pricing.request(
          { sku: order.sku, qty: order.qty },
          { timeoutMs },
        )) as Quote;
        return { orderId: order.id, total: quote.price };
      });
  });
}

/**
 * Waits until `t` published `count` messages to `name`: live, a reply may land after the quiet;
 * in-process, a transactional window commits (and records its outputs) as the test clock moves.
 */
async function publishedTo(t: TestApp, name: string, count: number): Promise<unknown[]> {
  const deadline = Date.now() + 30_000;
  while (t.published(name).length < count) {
    if (Date.now() > deadline) throw new Error(`${name}: ${t.published(name).length} of ${count}`);
    if (t.clock === undefined) await sleep(50);
    else await t.advance(50);
  }
  return t.published(name).map((m) => m.value);
}

for (const where of everywhere) {
  describe(where, () => {
    it("running.request and a handler's ctx.out request get the other app's replies", async () => {
      const prices = uniqueName(`prices-${where}`);
      const orders = uniqueName(`orders-${where}`);
      const receipts = `${orders}.receipts`;
      // One broker object: in-process, both apps' connections share its stand-in.
      const broker = brokerFor(where);
      const asked: Array<[string | undefined, string | undefined]> = [];
      const seller = await start(where, pricing(broker, prices, asked));
      const buyer = await start(where, shop(broker, new KafkaTopic(orders), prices, receipts));

      expect(await buyer.request(prices, { sku: "apple", qty: 2 }, { timeoutMs })).toEqual({
        sku: "apple",
        price: 6,
      });
      const concurrent = await Promise.all(
        ["fig", "kiwi", "lime"].map((sku, i) =>
          buyer.running.request(prices, { sku, qty: i + 1 }, { timeoutMs }),
        ),
      );
      expect(concurrent).toEqual([
        { sku: "fig", price: 3 },
        { sku: "kiwi", price: 6 },
        { sku: "lime", price: 9 },
      ]);
      await buyer.publish(orders, { id: 7, sku: "pear", qty: 5 });
      expect(await publishedTo(buyer, receipts, 1)).toEqual([{ orderId: 7, total: 15 }]);

      // Every request asked for its reply on the shop connection's one inbox, each with its own id.
      expect(asked).toHaveLength(5);
      const inboxes = new Set(asked.map(([replyTo]) => replyTo));
      expect(inboxes.size).toBe(1);
      const [inbox] = inboxes;
      expect(inbox).toMatch(/^ruststream-inbox-/);
      expect(new Set(asked.map(([, id]) => id)).size).toBe(5);
      // The pricing app answered there, through its own publisher.
      expect(await publishedTo(seller, inbox!, 5)).toHaveLength(5);
    });

    itTransactional(where)(
      "a handler under commit transactional sends its request at once and gets the reply",
      async () => {
        const prices = uniqueName(`prices-${where}`);
        const orders = uniqueName(`orders-tx-${where}`);
        const receipts = `${orders}.receipts`;
        const broker = brokerFor(where, { transactionalId: uniqueName(`shop-tx-${where}`) });
        const asked: Array<[string | undefined, string | undefined]> = [];
        await start(where, pricing(broker, prices, asked));
        const buyer = await start(
          where,
          shop(broker, new KafkaTopic(orders, { commit: "transactional" }), prices, receipts),
        );
        const before = Date.now();
        await buyer.publish(orders, { id: 1, sku: "plum", qty: 4 });
        expect(await publishedTo(buyer, receipts, 1)).toEqual([{ orderId: 1, total: 12 }]);
        // Well inside the request's timeout: a request staged for the window would have waited
        // for it (and failed), since the window commits only after the handler returns.
        expect(Date.now() - before).toBeLessThan(timeoutMs);
        expect(asked).toHaveLength(1);
      },
    );
  });
}
