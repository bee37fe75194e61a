import { readFileSync } from "node:fs";
import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { waitUntil } from "./support.js";

// The README's first block is test/fixtures/readmeApp.ts, byte for byte, and it runs: on the real
// server, since its transactional handler writes to a table of the service's.

const fixture = new URL("./fixtures/readmeApp.ts", import.meta.url);
let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: requireEnv("POSTGRES_URL") });
  await sql.connect();
  await sql.query("CREATE TABLE IF NOT EXISTS invoices (id text PRIMARY KEY, amount int NOT NULL)");
});
afterAll(() => sql.end());

it("the README's first block is test/fixtures/readmeApp.ts", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /## Use it\n[\s\S]*?```ts\n([\s\S]*?)```\n/.exec(readme)?.[1];
  expect(block, "copy test/fixtures/readmeApp.ts into the README's first block").toBe(
    readFileSync(fixture, "utf8"),
  );
});

it("the README's app sends an email and writes an invoice with its ack", async () => {
  process.env.DATABASE_URL = requireEnv("POSTGRES_URL");
  const { app } = await import("./fixtures/readmeApp.js");
  const t = await TestApp.startLive(app);
  try {
    const id = uniqueName("inv");
    await t.publish("emails", { to: "ada@example.com" });
    await t.publish("invoices", { id, amount: 42 });
    await waitUntil(
      10_000,
      "both handled",
      () =>
        t.subscriber("emails").outcomes.includes("ack") &&
        t.subscriber("invoices").outcomes.includes("ack"),
    );
    const written = await sql.query("SELECT amount FROM invoices WHERE id = $1", [id]);
    expect(written.rows).toEqual([{ amount: 42 }]);
  } finally {
    await t.stop();
  }
});
