import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, it } from "vitest";
import { KafkaBroker, KafkaTopic } from "../src/index.js";

// The README's "by hand" example, as written there but for the address and a fresh topic.
it("the README's example runs", async () => {
  const invoices = uniqueName("invoices");
  const broker = new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine: "kafkajs" });
  const connected = await broker.connect();
  const subscription = await connected.subscribe(
    new KafkaTopic(invoices, { group: "billing", commit: "tracked" }),
  );
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  const receipt = await publisher.publish({
    name: invoices,
    payload: new TextEncoder().encode("{}"),
    partitionKey: "customer-7", // the record key
  });
  expect(receipt.position).toBe(`${invoices}:0:0`);
  const next = await subscription.next();
  if (next.done) throw new Error("only close() or shutdown() ends a subscription");
  expect(next.value.partitionKey).toEqual(new TextEncoder().encode("customer-7"));
  expect(next.value.ack()).toBe("ok");
  const closed = await connected.shutdown();
  expect(closed.returnedDeliveries).toBe(0);
});
