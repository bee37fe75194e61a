import { bytes as bytesCodec, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ConnectedPostgresBroker,
  PostgresBroker,
  PostgresPublish,
  type PostgresPublisher,
  PostgresQueue,
} from "../src/index.js";

// Request/reply over the queue table, on the real server: a handler's reply reaches the request's
// connection through its reply inbox (a queue of the table), a transactional handler's reply is
// written in its claim's transaction, and the inbox's rows are gone once its connection shuts down.

const table = "e2e_requests";
const url = () => requireEnv("POSTGRES_URL");
const broker = () => new PostgresBroker({ url: url(), table, ensureSchema: true });

let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: url() });
  await sql.connect();
});
afterAll(() => sql.end());

const connections: ConnectedPostgresBroker[] = [];
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await Promise.all(connections.splice(0).map((c) => c.shutdown()));
});

async function requester(): Promise<{
  connected: ConnectedPostgresBroker;
  publisher: PostgresPublisher;
}> {
  const connected = await broker().connect();
  connections.push(connected);
  return { connected, publisher: await new PostgresPublish().pair(connected) };
}

const rowsOf = async (queue: string): Promise<number> =>
  (await sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE queue = $1`, [queue])).rows[0].n;

describe("requests to a queue", () => {
  it.each([
    ["leased claims", false],
    ["a transactional handler", true],
  ])("%s: each of 20 concurrent requests gets its own reply", async (_, transactional) => {
    const queue = uniqueName("ask");
    const app = new RustStream({ name: "answers", version: "1.0.0" }).broker(broker(), (b) => {
      b.subscriber<{ q: string }>(new PostgresQueue(queue, { transactional }))
        .reply()
        .handle((m) => ({ a: m.q.toUpperCase() }));
    });
    t = await TestApp.startLive(app);
    const { publisher } = await requester();
    const asked = Array.from({ length: 20 }, (_, i) => `q${i}`);
    const replies = await Promise.all(
      asked.map((q) =>
        publisher.request(
          { name: queue, payload: bytes(JSON.stringify({ q })) },
          { timeoutMs: 15_000 },
        ),
      ),
    );
    expect(replies.map((r) => JSON.parse(text(r.payload)).a)).toEqual(
      asked.map((q) => q.toUpperCase()),
    );
    expect(replies.every((r) => r.name.startsWith("ruststream.inbox."))).toBe(true);
  });

  it("a reply nobody waits for any more is taken from the inbox, and the inbox is emptied at shutdown", async () => {
    const queue = uniqueName("slow");
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const app = new RustStream({ name: "slow", version: "1.0.0" }).broker(broker(), (b) => {
      b.subscriber(queue, { codec: bytesCodec })
        .reply()
        .handle(async (asked) => {
          if (text(asked) === "slow") await released;
          return bytes(`answer to ${text(asked)}`);
        });
    });
    t = await TestApp.startLive(app);
    const { connected, publisher } = await requester();
    const answered = await publisher.request(
      { name: queue, payload: bytes("quick") },
      { timeoutMs: 15_000 },
    );
    expect(text(answered.payload)).toBe("answer to quick");
    const inbox = answered.name;
    await expect(
      publisher.request({ name: queue, payload: bytes("slow") }, { timeoutMs: 200 }),
    ).rejects.toThrow(/no reply within 200 ms/);
    release();
    // The late reply is written before its request is acked (the handler's second outcome), then
    // claimed and dropped by the inbox that no longer waits.
    await expect.poll(() => t!.subscriber(queue).outcomes.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => rowsOf(inbox), { timeout: 10_000 }).toBe(0);
    // A row the inbox has not claimed (due in a minute) is deleted with the connection.
    await publisher.publish({ name: inbox, payload: bytes("stray"), options: { delayMs: 60_000 } });
    expect(await rowsOf(inbox)).toBe(1);
    await connected.shutdown();
    connections.splice(connections.indexOf(connected), 1);
    expect(await rowsOf(inbox)).toBe(0);
  });
});
