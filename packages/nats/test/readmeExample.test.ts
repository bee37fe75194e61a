import { readFileSync } from "node:fs";
import { TestApp } from "@ruststream/testing";
import { expect, it } from "vitest";
import { app } from "./fixtures/readmeApp.js";

// The README's example is test/fixtures/readmeApp.ts, byte for byte, so the code a reader copies is
// code this test runs in-process.
it("the README's first example is test/fixtures/readmeApp.ts", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /## An example\n[\s\S]*?```ts\n([\s\S]*?)```\n/.exec(readme)?.[1];
  const source = readFileSync(new URL("./fixtures/readmeApp.ts", import.meta.url), "utf8");
  expect(block, "copy test/fixtures/readmeApp.ts into the README's first block").toBe(source);
});

it("the example bills each order with its message id", async () => {
  const t = await TestApp.start(app);
  try {
    await t.publish("orders.created", { id: 7, sku: "apple" });
    await t.publish("orders.created", { id: 7, sku: "apple" });
    const bills = t.published("orders.billed");
    expect(bills.map((m) => m.value)).toEqual([{ id: 7 }, { id: 7 }]);
    expect(bills.map((m) => m.headers.getString("nats-msg-id"))).toEqual(["billed-7", "billed-7"]);
  } finally {
    await t.stop();
  }
});
