import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test, vi } from "vitest";

// The production app against the real server the project's global setup started: the module
// main.ts runs, on queues no other run uses. The names and the database are read when the module
// loads, hence the dynamic import once they are set. The app reads DATABASE_URL, the name services
// give it; tooling/brokers exports POSTGRES_URL, and without it the test fails here, naming the fix.
process.env.DATABASE_URL = requireEnv("POSTGRES_URL");
process.env.ORDERS_TOPIC = uniqueName("example-postgres-orders");
process.env.RECEIPTS_TOPIC = uniqueName("example-postgres-receipts");
const { app, topics } = await import("../src/app.js");

test("live on PostgreSQL: an order gets its receipt", async () => {
  const t = await TestApp.startLive(app);
  try {
    await t.publish(topics.orders, { id: 1, sku: "apple", qty: 2 });
    // A live reaction counts as over after a quiet spell, which a loaded machine can fake: wait
    // for the receipt itself, then for quiet, and only then count.
    await vi.waitFor(() => expect(t.published(topics.receipts)).toHaveLength(1), {
      timeout: 10_000,
    });
    await t.settle();
    expect(t.published(topics.receipts).map((m) => m.value)).toEqual([{ orderId: 1, total: 6 }]);
    t.subscriber(topics.orders).assertCalledOnce().assertOutcomes("ack");
  } finally {
    await t.stop();
  }
});
