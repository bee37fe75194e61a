import { type ConnectionChange, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, uniqueName } from "@ruststream/tooling-testkit";
import { brokers } from "@ruststream/tooling-testkit/brokers";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBroker, PostgresQueue } from "../src/index.js";
import { waitUntil } from "./support.js";

// The server killed (SIGKILL of the postmaster and its backends) and started again on its data
// while a service works through a queue: every row published is handled, none is left, and the
// connection says it was away and came back. The server is a cluster of its own on its own port
// (tooling/brokers' restartable one), never the one the other live tests share.

const table = "restart_queue";
/** The service under test, stopped (whatever happened) before its server is. */
let t: TestApp | undefined;
const cluster = brokers.postgres.restartable;

/** A publish the test's producer makes again until the server takes it (it may be restarting). */
async function publishSurely(
  publish: () => Promise<unknown>,
  step: string,
  ms = 60_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await publish();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${step}: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe("the server restarted under load", () => {
  it("every row is handled once the server is back, none is left, and the state went reconnecting then connected", () =>
    cluster.exclusive(async () => {
      const url = await cluster.up();
      try {
        await restartedUnderLoad(url);
      } finally {
        // The app's connection first: it would otherwise go on reconnecting to a stopped server.
        await t?.stop();
        t = undefined;
        await cluster.down();
      }
    }));
});

async function restartedUnderLoad(url: string): Promise<void> {
  const queue = uniqueName("restart");
  const handled = new Set<string>();
  const changes: ConnectionChange[] = [];
  const app = new RustStream({ name: "restarted", version: "1.0.0" }).broker(
    new PostgresBroker({ url, table, ensureSchema: true }),
    (b) => {
      b.subscriber(new PostgresQueue(queue, { leaseMs: 2000, pollMs: 200, claim: 8 }))
        .workers(8)
        .handle(async (message) => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          handled.add((message as { n: string }).n);
        });
    },
  );
  app.observe((event) => {
    if (event.type === "broker-connection") changes.push({ state: event.state });
  });
  t = await TestApp.startLive(app);
  const producer = await new PostgresBroker({ url, table, ensureSchema: true }).connect();
  try {
    const publisher = await producer.defaultPublishPolicy().pair(producer);
    const total = 400;
    const publish = (i: number) =>
      publishSurely(
        () => publisher.publish({ name: queue, payload: bytes(JSON.stringify({ n: `m${i}` })) }),
        `publish m${i}`,
      );
    for (let i = 0; i < total / 2; i++) await publish(i);
    await waitUntil(30_000, "the service under way", () => handled.size >= 50);
    await cluster.restart({ hard: true });
    for (let i = total / 2; i < total; i++) await publish(i);
    await waitUntil(120_000, "every row handled", () => handled.size === total);
    expect([...handled].sort()).toEqual([...Array(total).keys()].map((i) => `m${i}`).sort());
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    await waitUntil(30_000, "no row left", async () => {
      const { rows } = await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE queue = $1`, [
        queue,
      ]);
      return rows[0].n === 0;
    });
    await sql.end();
    // Joined connected; away while the server was down; back.
    const states = changes.map((c) => c.state);
    expect(states[0]).toBe("connected");
    expect(states).toContain("reconnecting");
    expect(states.at(-1)).toBe("connected");
  } finally {
    await producer.shutdown();
  }
}
