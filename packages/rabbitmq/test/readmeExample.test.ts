import { readFileSync } from "node:fs";
import { isRustStreamError, systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, text } from "@ruststream/testing";
import { expect, it } from "vitest";
import { broker, orders, toEvents } from "./fixtures/readmeTopology.js";

// The README's two blocks, each byte for byte a file a test runs: the first is examples/rabbitmq's
// src/app.ts (the example's tests run it, in process and on the node), the second
// test/fixtures/readmeTopology.ts, whose descriptors the last test runs on the stand-in.
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const section = /## Start from the example\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```\n/g)].map((match) => match[1]);

it("the README's first example is examples/rabbitmq/src/app.ts", () => {
  const app = readFileSync(
    new URL("../../../examples/rabbitmq/src/app.ts", import.meta.url),
    "utf8",
  );
  expect(blocks[0], "copy examples/rabbitmq/src/app.ts into the README's first block").toBe(app);
});

it("the README's descriptors are test/fixtures/readmeTopology.ts", () => {
  const fixture = readFileSync(new URL("./fixtures/readmeTopology.ts", import.meta.url), "utf8");
  expect(blocks[1], "copy test/fixtures/readmeTopology.ts into the README's second block").toBe(
    fixture,
  );
});

it("the README's descriptors route orders.* through the topic exchange to the quorum queue, and refuse what nothing binds", async () => {
  const connected = await broker.connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });
  try {
    const subscription = await connected.subscribe(orders);
    const publisher = await toEvents.pair(connected);
    await publisher.publish({ name: "orders.created", payload: bytes("order 1") });
    const unbound = await publisher
      .publish({ name: "invoices.created", payload: bytes("invoice 1") })
      .catch((error: unknown) => error);
    expect(isRustStreamError(unbound, "publish-refused"), String(unbound)).toBe(true);
    expect((unbound as Error).message).toContain('routing key "invoices.created"');
    const delivery = (await subscription.next()).value;
    expect(text(delivery?.payload ?? new Uint8Array())).toBe("order 1");
    expect(delivery?.redeliveryCount).toBe(1);
    await delivery?.ack();
  } finally {
    await connected.shutdown();
  }
});
