// The README's examples, verbatim, so they keep working.
import { expect, it } from "vitest";
import {
  HeaderMap,
  headerNames,
  isRustStreamError,
  MemoryBroker,
  MemoryPublish,
  MemoryTopic,
  supportsSeek,
} from "../src/index.js";

it("README: publish, subscribe, settle, shut down", async () => {
  const broker = new MemoryBroker(); // synchronous, no I/O
  const connected = await broker.connect();

  const orders = await connected.subscribe(new MemoryTopic("orders", { group: "billing" }));
  const publisher = await new MemoryPublish().pair(connected);

  const receipt = await publisher.publish({
    name: "orders",
    payload: new TextEncoder().encode('{"id":1}'),
    headers: new HeaderMap().set(headerNames.contentType, "application/json"),
    partitionKey: "customer-7",
  });

  const next = await orders.next();
  if (!next.done) {
    const delivery = next.value;
    delivery.headers.getString("content-type"); // "application/json"
    delivery.redeliveryCount; // 1
    const answer = delivery.ack(); // "ok", synchronously on this broker
    expect(answer).toBe("ok");
    if (supportsSeek(orders)) {
      // Store a position as text, come back to it later.
      await orders.seek(orders.parsePosition(delivery.position.toString()));
    }
  }

  const closed = await connected.shutdown();
  closed.unflushed; // 0
  await publisher.publish({ name: "orders", payload: new Uint8Array() }).catch((error) => {
    isRustStreamError(error, "closed"); // true: every kind of handle refuses after shutdown
    expect(isRustStreamError(error, "closed")).toBe(true);
  });
  expect(receipt.position).toBe("0");
});
