import {
  type DeadLetterEvent,
  HeaderMap,
  type PublishEvent,
  type RuntimeEvent,
  RustStream,
} from "@ruststream/core";
import { RedisBroker } from "@ruststream/redis";
import { bytes, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  outboxDeadLetter,
  PostgresBroker,
  type PostgresOutbox,
  postgresHeaderNames,
} from "../../src/index.js";
import { waitUntil } from "../support.js";
import { inTransaction, ownRedis, redisCli } from "./support.js";

// The relay in an app (outbox.relayIn) reports each row it moved to its dead letter as the app's
// dead-letter event, the one a subscriber's dead letter emits (what @ruststream/metrics counts per
// subscriber and destination): on the real PostgreSQL, relaying to a Redis of the test's own that
// refuses every write.

const table = "outbox_live";
const idHeader = postgresHeaderNames.outboxId;

let url: string;
let sql: pg.Client;
let outbox: PostgresOutbox;

beforeAll(async () => {
  url = requireEnv("POSTGRES_URL");
  requireEnv("REDIS_URL");
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
});

afterAll(async () => {
  await outbox?.close();
  await sql?.end();
});

/** The rows of `queue` in the outbox table, with their dead letter's origin. */
async function rows(queue: string) {
  const { rows: found } = await sql.query(
    `SELECT id::text AS id, dead_source, dead_reason, dead_attempts,
            convert_from(header_values[array_position(header_names, $2)], 'UTF8') AS outbox_id
       FROM ${table}_outbox WHERE queue = $1 ORDER BY id`,
    [queue, idHeader],
  );
  return found as {
    id: string;
    dead_source: string | null;
    dead_reason: string | null;
    dead_attempts: number | null;
    outbox_id: string | null;
  }[];
}

/** An app on a Redis that refuses every write, its relay for `label`, and its events. */
async function refusingApp(label: string, maxAttempts: number) {
  const own = await ownRedis({ refusing: true });
  const redis = new RedisBroker({ url: own.url });
  const events: RuntimeEvent[] = [];
  const app = new RustStream({ name: "outbox-dead", version: "1.0.0" })
    .broker(redis)
    .afterStartup(async (running) => {
      await outbox.relayIn(running, {
        brokers: { [label]: redis },
        backoff: { firstMs: 20, maxMs: 50 },
        maxAttempts,
        pollMs: 50,
      });
    });
  app.observe((event: RuntimeEvent) => {
    if (event.type === "dead-letter" || event.type === "publish") events.push(event);
  });
  const running = await app.start();
  const dead = () => events.filter((e): e is DeadLetterEvent => e.type === "dead-letter");
  // The app's stop waits for the relay's loops: the events counted after it are all there are.
  const stop = () => running.stop();
  const close = async () => {
    try {
      await running.stop();
    } finally {
      await own.stop();
    }
  };
  return { own, events, dead, stop, close };
}

describe("the outbox relay's dead letters in an app", () => {
  it("emits one dead-letter event for a row whose publishes all failed, naming it and where it went", async () => {
    const label = uniqueName("events");
    const name = uniqueName("orders");
    const app = await refusingApp(label, 3);
    try {
      let id = "";
      await inTransaction(url, async (tx) => {
        id = await outbox.publish(tx, { broker: label, name }, { payload: bytes("never taken") });
      });
      await waitUntil(20_000, "the row in the dead letter", async () => {
        return (await rows(outboxDeadLetter(label))).length === 1;
      });
      await app.stop();
      expect(await rows(label)).toEqual([]);
      const [row] = await rows(outboxDeadLetter(label));
      expect(row).toMatchObject({
        dead_source: label,
        dead_reason: "max-attempts",
        dead_attempts: 3,
        outbox_id: id,
      });
      const dead = app.dead();
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({
        type: "dead-letter",
        subscriber: `outbox:${label}`,
        destination: outboxDeadLetter(label),
        reason: "max-attempts",
        movedBy: "broker",
      });
      // The delivery is the row as the relay claimed it the last time: its queue, id and attempt.
      expect(dead[0]?.delivery.name).toBe(label);
      expect(String(dead[0]?.delivery.position)).toBe(row?.id);
      expect(dead[0]?.delivery.headers.getString(idHeader)).toBe(id);
      expect(dead[0]?.delivery.redeliveryCount).toBe(3);
      // Each attempt was the app's publish, failed: counted as such beside the dead letter.
      const published = app.events.filter(
        (e): e is PublishEvent => e.type === "publish" && e.name === name,
      );
      expect(published.map((e) => e.ok)).toEqual([false, false, false]);
      expect(Number(await redisCli(app.own.url, "XLEN", name))).toBe(0);
    } finally {
      await app.close();
    }
  });

  it("emits one for a row claimed past the cap and one for a row without its outbox headers", async () => {
    const label = uniqueName("events");
    const name = uniqueName("orders");
    // Written before the relay starts: a row whose relays died on each of its 2 claims (its
    // attempts at the cap), and a row another writer put in the label's queue without headers.
    let spentId = "";
    await inTransaction(url, async (tx) => {
      spentId = await outbox.publish(tx, { broker: label, name }, { payload: bytes("spent") });
    });
    await sql.query(`UPDATE ${table}_outbox SET attempts = 2 WHERE queue = $1`, [label]);
    const onOutbox = await new PostgresBroker({ url, table: outbox.table }).connect();
    try {
      const raw = await onOutbox.defaultPublishPolicy().pair(onOutbox);
      const headers = new HeaderMap();
      headers.set("x-written-by", "not the outbox");
      await raw.publish({ name: label, payload: bytes("no outbox headers"), headers });
    } finally {
      await onOutbox.shutdown();
    }
    const app = await refusingApp(label, 2);
    try {
      await waitUntil(20_000, "both rows in the dead letter", async () => {
        return (await rows(outboxDeadLetter(label))).length === 2;
      });
      await app.stop();
      const dead = await rows(outboxDeadLetter(label));
      expect(dead.map((r) => [r.outbox_id, r.dead_source, r.dead_reason])).toEqual([
        [spentId, label, "max-attempts"],
        [null, label, "rejected"],
      ]);
      const events = app.dead();
      expect(events).toHaveLength(2);
      const byRow = new Map(events.map((e) => [String(e.delivery.position), e]));
      expect(byRow.get(dead[0]?.id as string)).toMatchObject({
        subscriber: `outbox:${label}`,
        destination: outboxDeadLetter(label),
        reason: "max-attempts",
        movedBy: "broker",
      });
      expect(byRow.get(dead[0]?.id as string)?.delivery.headers.getString(idHeader)).toBe(spentId);
      expect(byRow.get(dead[1]?.id as string)).toMatchObject({
        subscriber: `outbox:${label}`,
        destination: outboxDeadLetter(label),
        reason: "rejected",
        movedBy: "broker",
      });
      // Neither was published: one was moved at its claim, the other had nowhere to go.
      expect(app.events.filter((e) => e.type === "publish")).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
