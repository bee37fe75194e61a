// `pnpm start`: runs the service and, to show it working, feeds it a few orders of its own (one of them
// malformed), then stops gracefully. A real service would just `await app.run()`.
//
// The orders, receipts and dead letters go to a real stream file. Run it twice: the second run handles
// only its own new orders, because each subscriber resumes after the last message it settled.
import { bytes } from "@ruststream/core";
import { app, dataFile } from "./app.js";

// Ids unique per run, so the two runs' orders are told apart in the log.
const first = (Math.floor(Date.now() / 1000) % 100_000) * 10;
const demoOrders = [
  { id: first + 1, sku: "apple", qty: 2 },
  { id: first + 2, sku: "pear", qty: 1 },
  { id: first + 3, sku: "durian", qty: 1 },
  { id: first + 4, sku: "plum", qty: 5 },
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
  setTimeout(finished, 500);
});

process.stderr.write(`orders service on ${dataFile} (delete it to start afresh)\n`);
await app.run({ until: demoDone });
