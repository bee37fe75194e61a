// The README's first example, line for line, with an assertion under every value its comments
// promise, so the documented code is the code that is checked.
import { readFileSync } from "node:fs";
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

  await publisher.publish({
    name: "orders",
    payload: new TextEncoder().encode('{"id":1}'),
    headers: new HeaderMap().set(headerNames.contentType, "application/json"),
    partitionKey: "customer-7",
  });

  const next = await orders.next();
  if (next.done) throw new Error("orders ended"); // only close() or shutdown() ends a subscription
  const delivery = next.value;
  delivery.headers.getString("content-type"); // "application/json"
  expect(delivery.headers.getString("content-type")).toBe("application/json");
  delivery.redeliveryCount; // 1
  expect(delivery.redeliveryCount).toBe(1);
  const answer = delivery.ack(); // "ok", synchronously on this broker
  expect(answer).toBe("ok");

  // Capabilities are checked, not assumed: the guard narrows the type, and is false on a broker
  // whose subscriptions cannot seek.
  if (!supportsSeek(orders)) throw new Error("orders cannot seek");
  // Store a position as text, come back to it later.
  await orders.seek(orders.parsePosition(delivery.position.toString()));
  const back = await orders.next();
  expect(back.done).toBe(false);
  expect(new TextDecoder().decode(back.value?.payload)).toBe('{"id":1}');

  const closed = await connected.shutdown();
  closed.unflushed; // 0
  expect(closed.unflushed).toBe(0);
  const refused = await publisher
    .publish({ name: "orders", payload: new Uint8Array() })
    .catch((error: unknown) => error);
  isRustStreamError(refused, "closed"); // true: every kind of handle refuses after shutdown
  expect(isRustStreamError(refused, "closed")).toBe(true);
});

it("the README's example is the one above", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /## Use it\s+```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block).toBeDefined();
  const lines = (text: string) =>
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
  // The imports are laid out differently; everything after them must appear here, in order.
  const documented = lines(block ?? "").slice(
    lines(block ?? "").findIndex((line) => line.startsWith("} from")) + 1,
  );
  const here = lines(readFileSync(new URL(import.meta.url), "utf8"));
  let at = 0;
  const missing = documented.filter((line) => {
    const found = here.indexOf(line, at);
    if (found === -1) return true;
    at = found + 1;
    return false;
  });
  expect(documented.length).toBeGreaterThan(20);
  expect(missing).toEqual([]);
});
