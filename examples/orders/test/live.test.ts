import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestApp } from "@ruststream/testing";
import { TestApp as Harness } from "@ruststream/testing";
import { afterAll, expect, test, vi } from "vitest";

// The production app, live on a real stream file: the same module main.ts runs, pointed at a
// temporary file through ORDERS_FILE (read when the module loads, hence the dynamic import).
const dir = mkdtempSync(join(tmpdir(), "orders-live-"));
process.env.ORDERS_FILE = join(dir, "orders.ss");
const { app } = await import("../src/app.js");

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function receiptsOf(t: TestApp): Promise<unknown[]> {
  return t.published("receipts").map((m) => m.value);
}

test("live on a real file: receipts come back, and a restart resumes instead of replaying", async () => {
  const first = await Harness.startLive(app);
  await first.publish("orders", { id: 1, sku: "apple", qty: 2 });
  await first.publish("orders", { id: 2, sku: "pear", qty: 1 });
  // A live reaction counts as over after a quiet spell, which a loaded machine can fake: wait for
  // the receipts themselves, then for quiet, and only then count.
  await vi.waitFor(() => first.subscriber("receipts").assertCalled(2), { timeout: 10_000 });
  await first.settle();
  expect(await receiptsOf(first)).toEqual([
    { orderId: 1, sku: "apple", total: 6 },
    { orderId: 2, sku: "pear", total: 4 },
  ]);
  first.subscriber("orders").assertCalled(2);
  await first.stop();

  const second = await Harness.startLive(app);
  await second.publish("orders", { id: 3, sku: "plum", qty: 5 });
  await vi.waitFor(() => second.subscriber("receipts").assertCalled(1), { timeout: 10_000 });
  await second.settle();
  // Only the new order: 1 and 2 were settled before the restart and are not handled again.
  second.subscriber("orders").assertCalledOnce().assertCalledWith({ id: 3, sku: "plum", qty: 5 });
  expect(await receiptsOf(second)).toEqual([{ orderId: 3, sku: "plum", total: 10 }]);
  await second.stop();
}, 30_000);
