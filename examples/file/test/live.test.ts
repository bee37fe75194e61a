import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestApp } from "@ruststream/testing";
import { afterAll, expect, test, vi } from "vitest";

// The production app on a real stream file: the module main.ts runs, pointed at a temporary file
// through ORDERS_FILE (read when the module loads, hence the dynamic import once it is set).
const dir = mkdtempSync(join(tmpdir(), "example-file-"));
process.env.ORDERS_FILE = join(dir, "orders.ss");
const { app, topics } = await import("../src/app.js");

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("live on a real file: an order gets its receipt", async () => {
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
