// `npm start`: opens the service, places three orders (and one whose id is taken, which fails and
// publishes nothing), prints the shipments once shipping made them, and serves until SIGTERM or
// Ctrl-C, then stops the relay and the app.
import { setTimeout as sleep } from "node:timers/promises";
import { openService } from "./app.js";

const service = await openService();
const run = Date.now().toString(36);
const orders = [
  { id: `${run}-1`, sku: "apple", qty: 2 },
  { id: `${run}-2`, sku: "pear", qty: 1 },
  { id: `${run}-3`, sku: "plum", qty: 5 },
];
for (const order of orders)
  console.log("placed", order.id, "outbox id", await service.placeOrder(order));
await service.placeOrder({ id: `${run}-1`, sku: "apple", qty: 9 }).catch((error: Error) => {
  console.log("refused", `${run}-1`, "again:", error.message);
});
for (;;) {
  const shipped = (await service.shipments()).filter((s) => s.id.startsWith(`${run}-`));
  if (shipped.length === orders.length) {
    console.log("shipped", shipped);
    break;
  }
  await sleep(200);
}
const stop = () => {
  void service.stop().then(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
console.log("serving; Ctrl-C stops");
