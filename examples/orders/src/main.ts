// `pnpm start`: runs the service and, to show it working, feeds it a few orders of its own (one of them
// malformed), then stops gracefully. A real service would just `await app.run()`.
import { bytes } from "@ruststream/core";
import { app } from "./app.js";

const demoOrders = [
  { id: 1, sku: "apple", qty: 2 },
  { id: 2, sku: "pear", qty: 1 },
  { id: 3, sku: "durian", qty: 1 },
  { id: 4, sku: "plum", qty: 5 },
];

let finished!: () => void;
const demoDone = new Promise<void>((resolve) => {
  finished = resolve;
});

app.afterStartup(async (running) => {
  for (const order of demoOrders) await running.publish("orders", order);
  // Not an order at all: it fails validation and goes to the dead letter.
  await running.publish("orders", new TextEncoder().encode('{"id": "five", "qty": -1}'), {
    codec: bytes,
  });
  // Give the reaction (receipts, the dead letter) a moment, then stop as SIGTERM would.
  setTimeout(finished, 300);
});

await app.run({ until: demoDone });
