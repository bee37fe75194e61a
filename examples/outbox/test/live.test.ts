import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test, vi } from "vitest";

// The service against the real PostgreSQL and Kafka the project's global setup started, on a topic
// no other run uses. The app reads DATABASE_URL and KAFKA_BROKERS, the names services give them;
// tooling/brokers exports POSTGRES_URL and KAFKA_BROKERS, and without them the test fails here,
// naming the fix. The names are read when the module loads, hence the dynamic import.
process.env.DATABASE_URL = requireEnv("POSTGRES_URL");
process.env.KAFKA_BROKERS = requireEnv("KAFKA_BROKERS");
process.env.ORDERS_TOPIC = uniqueName("example-outbox-orders");
const { openService } = await import("../src/app.js");

test("each order placed is shipped once; an order id taken again is refused and changes no shipment", async () => {
  const service = await openService();
  try {
    const run = uniqueName("o");
    const placed = [
      { id: `${run}-1`, sku: "apple", qty: 2 },
      { id: `${run}-2`, sku: "pear", qty: 1 },
    ];
    for (const order of placed) await service.placeOrder(order);
    // The same id again: the INSERT fails, and the event written beside it is rolled back with it.
    await expect(service.placeOrder({ id: `${run}-1`, sku: "apple", qty: 9 })).rejects.toThrow(
      /duplicate key/,
    );
    await service.placeOrder({ id: `${run}-3`, sku: "plum", qty: 5 });
    const ours = async () => (await service.shipments()).filter((s) => s.id.startsWith(run));
    await vi.waitFor(async () => expect(await ours()).toHaveLength(3), { timeout: 30_000 });
    expect(await ours()).toEqual([...placed, { id: `${run}-3`, sku: "plum", qty: 5 }]);
  } finally {
    await service.stop();
  }
});
