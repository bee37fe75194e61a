import { fileURLToPath } from "node:url";
import { type Delivery, HeaderMap, isRustStreamError, type Publisher } from "@ruststream/core";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import {
  bytes,
  killServices,
  requireEnv,
  startService,
  text,
  uniqueName,
} from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  outboxDeadLetter,
  PostgresBroker,
  PostgresInbox,
  type PostgresOutbox,
  postgresHeaderNames,
} from "../../src/index.js";
import { waitUntil } from "../support.js";
import { inTransaction as inTransactionAt, ownRedis, redisCli, take, warnings } from "./support.js";

// The transactional outbox on the real PostgreSQL, relaying to a real Redis: the shared server for
// what must arrive, and a server of the test's own for a broker that refuses (the shared one is
// never stopped or reconfigured). Each test relays its own broker label, so the relays of one test
// never claim another's rows.

const table = "outbox_live";
const fixture = fileURLToPath(new URL("./relayProcess.ts", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));
const idHeader = postgresHeaderNames.outboxId;

let url: string;
let redisUrl: string;
let sql: pg.Client;
let outbox: PostgresOutbox;
let redis: Awaited<ReturnType<RedisBroker["connect"]>>;
let publisher: Publisher<never>;

beforeAll(async () => {
  url = requireEnv("POSTGRES_URL");
  redisUrl = requireEnv("REDIS_URL");
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
  redis = await new RedisBroker({ url: redisUrl, group: "outbox-tests" }).connect();
  publisher = await redis.defaultPublishPolicy().pair(redis);
});

afterAll(async () => {
  killServices();
  await outbox?.close();
  await redis?.shutdown();
  await sql?.end();
});

/** Runs `work` in a transaction on its own connection; commits, or rolls back when `rollback`. */
const inTransaction = (work: (tx: pg.ClientBase) => Promise<void>, rollback = false) =>
  inTransactionAt(url, work, rollback);

/** The outbox rows of `label` (or of its dead letter), as the table holds them. */
async function rows(queue: string) {
  const { rows: found } = await sql.query(
    `SELECT id::text AS id, attempts, done_at, dead_source, dead_reason, dead_attempts,
            header_names, header_values
       FROM ${table}_outbox WHERE queue = $1 ORDER BY id`,
    [queue],
  );
  return found as {
    id: string;
    attempts: number;
    done_at: Date | null;
    dead_source: string | null;
    dead_reason: string | null;
    dead_attempts: number | null;
  }[];
}

const stream = (name: string) =>
  new RedisStream(name, { group: "outbox-tests", start: "beginning" });
const idOf = (delivery: Delivery) => delivery.headers.getString(idHeader);

/** Commits `count` messages for `label` on one partition key, payloads "0", "1", ...: their ids. */
async function publishOnOneKey(label: string, name: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  await inTransaction(async (tx) => {
    for (let seq = 0; seq < count; seq++) {
      ids.push(
        await outbox.publish(
          tx,
          { broker: label, name },
          { payload: bytes(String(seq)), partitionKey: "one-key" },
        ),
      );
    }
  });
  return ids;
}

/** The first `count` messages of the stream `name`, read from its beginning on `connected`. */
async function readStream(
  connected: Awaited<ReturnType<RedisBroker["connect"]>>,
  name: string,
  count: number,
): Promise<Delivery[]> {
  const subscription = await connected.subscribe(stream(name));
  try {
    return await take(subscription, count);
  } finally {
    await subscription.close();
  }
}

describe("the transactional outbox, relayed to Redis", () => {
  it("writes nothing of a rolled-back transaction and publishes a committed one once, in order per key", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("orders");
    const keys = ["k0", "k1", "k2", "k3"];
    const perKey = 10;
    let rolledBack = "";
    await inTransaction(async (tx) => {
      rolledBack = await outbox.publish(
        tx,
        { broker: label, name },
        { payload: bytes("rolled back"), partitionKey: "k0" },
      );
    }, true);
    const committed: string[] = [];
    await inTransaction(async (tx) => {
      for (let seq = 0; seq < perKey; seq++) {
        for (const key of keys) {
          committed.push(
            await outbox.publish(
              tx,
              { broker: label, name },
              { payload: bytes(JSON.stringify({ key, seq })), partitionKey: key },
            ),
          );
        }
      }
    });
    expect((await rows(label)).map((r) => r.attempts)).toEqual(committed.map(() => 0));

    const relay = await outbox.relay({ targets: { [label]: publisher }, sent: "keep" });
    try {
      // Every committed row marked sent: each was confirmed by Redis before it was marked.
      await waitUntil(20_000, "every committed row marked sent", async () =>
        (await rows(label)).every((r) => r.done_at !== null),
      );
    } finally {
      await relay.stop();
    }
    const sent = await rows(label);
    expect(sent.map((r) => r.attempts)).toEqual(committed.map(() => 1));
    // Everything Redis confirmed is in the stream: exactly the committed messages, once each.
    expect(Number(await redisCli(redisUrl, "XLEN", name))).toBe(committed.length);

    const got = await readStream(redis, name, committed.length);
    expect(got.map(idOf).sort()).toEqual([...committed].sort());
    expect(got.map(idOf)).not.toContain(rolledBack);
    for (const d of got) {
      expect(d.headers.has(postgresHeaderNames.outboxDestination)).toBe(false);
    }
    // In order per key: each key's messages in the order its transaction wrote them.
    const bodies = got.map((d) => JSON.parse(text(d.payload)) as { key: string; seq: number });
    for (const key of keys) {
      expect(bodies.filter((b) => b.key === key).map((b) => b.seq)).toEqual([
        ...Array(perKey).keys(),
      ]);
    }
  });

  it("retries with a backoff while the broker refuses, and delivers once when it takes messages again", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("refused");
    const own = await ownRedis({ refusing: true });
    const target = await new RedisBroker({ url: own.url }).connect();
    // The relay's warnings, read for the wait each refused publish was given.
    const { logger, entries } = warnings();
    const waits = () =>
      entries.flatMap((e) => (typeof e.fields.retryInMs === "number" ? [e.fields.retryInMs] : []));
    try {
      const ids = await publishOnOneKey(label, name, 3);
      const relay = await outbox.relay({
        targets: { [label]: await target.defaultPublishPolicy().pair(target) },
        backoff: { firstMs: 100, maxMs: 400 },
        maxAttempts: 100,
        pollMs: 50,
        logger,
        sent: "keep",
      });
      try {
        await waitUntil(20_000, "four refused publishes", () => waits().length >= 4);
        // The key's head is retried, doubling its wait up to the cap; the rows behind it wait.
        expect(waits().slice(0, 4)).toEqual([100, 200, 400, 400]);
        const held = await rows(label);
        expect(held[0]?.attempts).toBeGreaterThanOrEqual(4);
        expect(held.slice(1).map((r) => r.attempts)).toEqual([0, 0]);
        expect(Number(await redisCli(own.url, "XLEN", name))).toBe(0);

        await own.accept();
        await waitUntil(20_000, "every row marked sent", async () =>
          (await rows(label)).every((r) => r.done_at !== null),
        );
      } finally {
        await relay.stop();
      }
      expect(Number(await redisCli(own.url, "XLEN", name))).toBe(3);
      const got = await readStream(target, name, 3);
      expect(got.map(idOf)).toEqual(ids);
      expect(got.map((d) => text(d.payload))).toEqual(["0", "1", "2"]);
    } finally {
      await target.shutdown();
      await own.stop();
    }
  });

  it("holds a key's head while the broker is down, and delivers once, in order, when it is back", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("down");
    const own = await ownRedis({ refusing: false });
    const target = await new RedisBroker({ url: own.url }).connect();
    try {
      await own.kill();
      const ids = await publishOnOneKey(label, name, 3);
      const relay = await outbox.relay({
        targets: { [label]: await target.defaultPublishPolicy().pair(target) },
        pollMs: 50,
        sent: "keep",
      });
      try {
        // The head is claimed and its publish waits for the server; the rows behind it wait too.
        await waitUntil(20_000, "the key's head claimed", async () => {
          return (await rows(label))[0]?.attempts === 1;
        });
        expect((await rows(label)).slice(1).map((r) => r.attempts)).toEqual([0, 0]);
        await own.restart();
        await waitUntil(20_000, "every row marked sent", async () =>
          (await rows(label)).every((r) => r.done_at !== null),
        );
      } finally {
        await relay.stop();
      }
      // Each published once: one claim each, and three entries on the restarted (empty) server.
      expect((await rows(label)).map((r) => r.attempts)).toEqual([1, 1, 1]);
      expect(Number(await redisCli(own.url, "XLEN", name))).toBe(3);
      const got = await readStream(target, name, 3);
      expect(got.map(idOf)).toEqual(ids);
    } finally {
      await target.shutdown();
      await own.stop();
    }
  });

  it("counts a publish unconfirmed within publishTimeoutMs as a failed attempt, up to the dead letter", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("timeout");
    const own = await ownRedis({ refusing: false });
    const target = await new RedisBroker({ url: own.url }).connect();
    const { logger, entries } = warnings();
    try {
      await own.kill();
      await inTransaction(async (tx) => {
        await outbox.publish(tx, { broker: label, name }, { payload: bytes("never confirmed") });
      });
      const relay = await outbox.relay({
        targets: { [label]: await target.defaultPublishPolicy().pair(target) },
        publishTimeoutMs: 200,
        backoff: { firstMs: 20, maxMs: 50 },
        maxAttempts: 3,
        pollMs: 50,
        logger,
      });
      try {
        // Without the bound the head would wait for the server (the test above); with it, each
        // wait is an attempt, and the third moves the row to the dead letter.
        await waitUntil(20_000, "the row in the dead letter", async () => {
          return (await rows(outboxDeadLetter(label))).length === 1;
        });
      } finally {
        await relay.stop();
      }
      expect(await rows(outboxDeadLetter(label))).toMatchObject([
        { dead_source: label, dead_reason: "max-attempts", dead_attempts: 3 },
      ]);
      const timeouts = entries
        .map((e) => e.fields.error)
        .filter((e) => isRustStreamError(e, "timeout"));
      expect(timeouts).toHaveLength(3);
      expect(String((timeouts[0] as Error).message)).toContain("publishTimeoutMs (200 ms)");
    } finally {
      await target.shutdown();
      await own.stop();
    }
  });

  it("refuses a publishTimeoutMs that is not a whole number of 1 or more", async () => {
    await expect(
      outbox.relay({ targets: { x: publisher }, publishTimeoutMs: 0 }),
    ).rejects.toMatchObject({
      code: "invalid-argument",
      message: expect.stringContaining("publishTimeoutMs"),
    });
  });

  it("stops within stopTimeoutMs while a publish waits for a broker that is down, leaving the row unmarked", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("stop");
    const own = await ownRedis({ refusing: false });
    const target = await new RedisBroker({ url: own.url }).connect();
    try {
      await own.kill();
      await inTransaction(async (tx) => {
        await outbox.publish(tx, { broker: label, name }, { payload: bytes("waits") });
      });
      const relay = await outbox.relay({
        targets: { [label]: await target.defaultPublishPolicy().pair(target) },
        pollMs: 50,
        stopTimeoutMs: 300,
      });
      await waitUntil(20_000, "the row claimed", async () => {
        return (await rows(label))[0]?.attempts === 1;
      });
      const stopping = relay.stop();
      let stopped = false;
      void stopping.then(() => {
        stopped = true;
      });
      await waitUntil(5_000, "the relay stopped", () => stopped);
      expect(await rows(label)).toMatchObject([{ attempts: 1, done_at: null }]);
    } finally {
      await target.shutdown();
      await own.stop();
    }
  });

  it("moves a message whose attempts ran out to the outbox's dead letter, with its origin", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("dead");
    const own = await ownRedis({ refusing: true });
    const target = await new RedisBroker({ url: own.url }).connect();
    try {
      let id = "";
      await inTransaction(async (tx) => {
        id = await outbox.publish(tx, { broker: label, name }, { payload: bytes("never taken") });
      });
      const relay = await outbox.relay({
        targets: { [label]: await target.defaultPublishPolicy().pair(target) },
        backoff: { firstMs: 20, maxMs: 50 },
        maxAttempts: 3,
        pollMs: 50,
      });
      try {
        await waitUntil(20_000, "the row in the dead letter", async () => {
          return (await rows(outboxDeadLetter(label))).length === 1;
        });
      } finally {
        await relay.stop();
      }
      expect(await rows(label)).toEqual([]);
      const [dead] = await rows(outboxDeadLetter(label));
      expect(dead).toMatchObject({
        dead_source: label,
        dead_reason: "max-attempts",
        dead_attempts: 3,
      });
      const { rows: headers } = await sql.query(
        `SELECT convert_from(header_values[array_position(header_names, $2)], 'UTF8') AS id
           FROM ${table}_outbox WHERE id = $1`,
        [dead?.id, idHeader],
      );
      expect(headers[0]?.id).toBe(id);
      expect(Number(await redisCli(own.url, "XLEN", name))).toBe(0);
      // The queue's redrive, on the outbox table, moves it back for the next relay.
      const onOutbox = await new PostgresBroker({ url, table: outbox.table }).connect();
      try {
        expect(await onOutbox.redrive(outboxDeadLetter(label))).toBe(1);
      } finally {
        await onOutbox.shutdown();
      }
      expect(await rows(label)).toMatchObject([{ id: dead?.id, attempts: 0, dead_source: null }]);
    } finally {
      await target.shutdown();
      await own.stop();
    }
  });

  it("publishes again after a relay killed between the publish and marking it sent, and the inbox drops the copy", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("crash");
    const leaseMs = 2000;
    const lines: string[] = [];
    const child = await startService({
      fixture,
      args: [url, table, label, "redis", redisUrl, String(leaseMs), "1"],
      cwd,
      onLine: (line) => lines.push(line),
    });
    let id = "";
    await inTransaction(async (tx) => {
      id = await outbox.publish(tx, { broker: label, name }, { payload: bytes("charge 42") });
    });
    // The child published it, Redis confirmed, and the child died before marking the row.
    expect(await child.exited).toBeNull();
    expect(lines).toEqual([`published ${id}`]);
    expect(Number(await redisCli(redisUrl, "XLEN", name))).toBe(1);
    const [left] = await rows(label);
    expect(left).toMatchObject({ attempts: 1, done_at: null });

    // Another relay sends it again once the dead relay's lease ended: the same outbox id.
    const relay = await outbox.relay({
      targets: { [label]: publisher },
      sent: "keep",
      pollMs: 100,
    });
    try {
      await waitUntil(20_000, "the row marked sent", async () =>
        (await rows(label)).every((r) => r.done_at !== null),
      );
    } finally {
      await relay.stop();
    }
    expect((await rows(label))[0]?.attempts).toBe(2);
    expect(Number(await redisCli(redisUrl, "XLEN", name))).toBe(2);

    // The consumer records each id in its handler's transaction: the copy has no effect.
    const effects = `"${uniqueName("charges")}"`;
    await sql.query(`CREATE TABLE ${effects} (outbox_id text, body text)`);
    const inbox = new PostgresInbox(uniqueName("billing"), { table: "outbox_live_inbox" });
    await inbox.ensureSchema(sql);
    const subscription = await redis.subscribe(stream(name));
    const firsts: boolean[] = [];
    for (const delivery of await take(subscription, 2)) {
      await inTransaction(async (tx) => {
        const first = await inbox.first(tx, delivery);
        firsts.push(first);
        if (first) {
          await tx.query(`INSERT INTO ${effects} VALUES ($1, $2)`, [
            idOf(delivery),
            text(delivery.payload),
          ]);
        }
      });
    }
    await subscription.close();
    expect(firsts).toEqual([true, false]);
    const { rows: done } = await sql.query(`SELECT outbox_id, body FROM ${effects}`);
    await sql.query(`DROP TABLE ${effects}`);
    expect(done).toEqual([{ outbox_id: id, body: "charge 42" }]);
  });

  it("refuses a publish without a transaction or a destination, naming what to give", async () => {
    await expect(
      outbox.publish(undefined as never, { broker: "x", name: "y" }, { payload: bytes("a") }),
    ).rejects.toMatchObject({ code: "invalid-argument" });
    await expect(
      outbox.publish(sql, { broker: "", name: "y" }, { payload: bytes("a") }),
    ).rejects.toMatchObject({ code: "invalid-argument" });
    const inbox = new PostgresInbox("refuses");
    await expect(inbox.first(sql, { headers: new HeaderMap() })).rejects.toMatchObject({
      code: "invalid-argument",
    });
  });
});
