import { randomUUID } from "node:crypto";
import { TestApp } from "@ruststream/testing";
import { expect, test, vi } from "vitest";

// The production app against the real server the project's global setup started: the module
// main.ts runs, on topics and a group no other run uses. The names are read when the module loads, hence the
// dynamic import once they are set.
if (!process.env.KAFKA_BROKERS) {
  throw new Error(
    'KAFKA_BROKERS is not set: the example-kafka project\'s global setup (ensureBrokers(["kafka"])) did not run or failed; run `npx vitest run --project example-kafka` from the repository root, or `pnpm brokers up kafka`',
  );
}
const run = randomUUID().slice(0, 8);
process.env.ORDERS_TOPIC = `example-kafka.orders.${run}`;
process.env.RECEIPTS_TOPIC = `example-kafka.receipts.${run}`;
process.env.KAFKA_GROUP = `example-kafka.${run}`;
const { app, topics } = await import("../src/app.js");

test("live on Kafka: an order gets its receipt", async () => {
  const t = await TestApp.startLive(app);
  try {
    await t.publish(topics.orders, { id: 1, sku: "apple", qty: 2 });
    // A live reaction counts as over after a quiet spell, which a loaded machine can fake: wait
    // for the receipt itself, then for quiet, and only then count.
    await vi.waitFor(() => expect(t.published(topics.receipts)).toHaveLength(1), {
      timeout: 30_000,
    });
    await t.settle();
    expect(t.published(topics.receipts).map((m) => m.value)).toEqual([{ orderId: 1, total: 6 }]);
    t.subscriber(topics.orders).assertCalledOnce().assertOutcomes("ack");
  } finally {
    await t.stop();
  }
});
