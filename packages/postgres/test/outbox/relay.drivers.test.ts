import { PGlite } from "@electric-sql/pglite";
import type { Publisher } from "@ruststream/core";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  outboxDeadLetter,
  PgliteDriver,
  PostgresBroker,
  type PostgresDriver,
  PostgresJsDriver,
  type PostgresOutbox,
  postgresHeaderNames,
} from "../../src/index.js";
import { waitUntil } from "../support.js";
import { ownRedis, redisCli, take } from "./support.js";

// The outbox relay over the seam's other two clients: postgres.js against the real server, and
// PGlite in the process (one connection, which the publishes' transactions, the relay's claims and
// its listen share). Each writes its rows in a transaction of its own driver and relays them to
// the real Redis. The relay polls once a minute here: rows written once it went idle that arrive
// within the test's bounds were woken by the driver's LISTEN (the publish's NOTIFY at its commit).

const idHeader = postgresHeaderNames.outboxId;
/** Longer than every bound below: a row relayed in time was not found by the poll. */
const pollMs = 60_000;

let redisUrl: string;
let redis: Awaited<ReturnType<RedisBroker["connect"]>>;
let publisher: Publisher<never>;

beforeAll(async () => {
  redisUrl = requireEnv("REDIS_URL");
  redis = await new RedisBroker({ url: redisUrl, group: "outbox-drivers" }).connect();
  publisher = await redis.defaultPublishPolicy().pair(redis);
});

afterAll(async () => {
  await redis?.shutdown();
});

/** The outbox on one driver, and the driver to write and read its table with. */
interface OnDriver {
  readonly driver: PostgresDriver;
  readonly outbox: PostgresOutbox;
}

function relaySuite(open: () => Promise<OnDriver>, close: () => Promise<void>): void {
  let on: OnDriver;
  beforeAll(async () => {
    on = await open();
  }, 60_000);
  afterAll(async () => {
    await on?.outbox.close();
    await close();
  });

  /** The rows of `queue` in the outbox table, as the driver reads them. */
  const rows = async (queue: string) =>
    (
      await on.driver.query(
        `SELECT id::text AS id, dead_source, dead_reason, dead_attempts
           FROM ${on.outbox.table} WHERE queue = $1 ORDER BY id`,
        [queue],
      )
    ).rows;

  it("relays a committed transaction once, in order per key, woken by its commit; a rolled-back one not at all", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("orders");
    const relay = await on.outbox.relay({ targets: { [label]: publisher }, pollMs });
    const subscription = await redis.subscribe(
      new RedisStream(name, { group: "outbox-drivers", start: "beginning" }),
    );
    try {
      // A first row, relayed and marked sent: the relay then claims again, finds nothing and waits.
      await on.driver.transaction((tx) =>
        on.outbox.publish(tx, { broker: label, name }, { payload: bytes("first") }),
      );
      expect((await take(subscription, 1, 20_000)).map((d) => text(d.payload))).toEqual(["first"]);
      await waitUntil(20_000, "the first row marked sent", async () => {
        return (await rows(label)).length === 0;
      });
      const rolledBack = new Error("rolled back by the test");
      await expect(
        on.driver.transaction(async (tx) => {
          await on.outbox.publish(tx, { broker: label, name }, { payload: bytes("never") });
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
      const written: string[] = [];
      await on.driver.transaction(async (tx) => {
        for (let seq = 0; seq < 5; seq++) {
          for (const key of ["a", "b"]) {
            const payload = bytes(`${key}${seq}`);
            written.push(
              await on.outbox.publish(tx, { broker: label, name }, { payload, partitionKey: key }),
            );
          }
        }
      });
      const got = await take(subscription, 10, 20_000);
      await waitUntil(
        20_000,
        "every row marked sent",
        async () => (await rows(label)).length === 0,
      );
      const payloads = got.map((d) => text(d.payload));
      for (const key of ["a", "b"]) {
        expect(payloads.filter((p) => p.startsWith(key))).toEqual(
          [0, 1, 2, 3, 4].map((seq) => `${key}${seq}`),
        );
      }
      expect(got.map((d) => d.headers.getString(idHeader)).sort()).toEqual([...written].sort());
      // Each once, and nothing of the rolled-back transaction.
      expect(await redisCli(redisUrl, "XLEN", name)).toBe("11");
    } finally {
      await subscription.close();
      await relay.stop();
    }
  });

  it("retries a refused publish at its due time and moves it to the dead letter at maxAttempts", async () => {
    const label = uniqueName("redis");
    const name = uniqueName("dead");
    const own = await ownRedis({ refusing: true });
    const target = await new RedisBroker({ url: own.url }).connect();
    try {
      const relay = await on.outbox.relay({
        targets: { [label]: await target.defaultPublishPolicy().pair(target) },
        backoff: { firstMs: 50, maxMs: 100 },
        maxAttempts: 3,
        pollMs,
      });
      try {
        await on.driver.transaction((tx) =>
          on.outbox.publish(tx, { broker: label, name }, { payload: bytes("never taken") }),
        );
        await waitUntil(20_000, "the row in the dead letter", async () => {
          return (await rows(outboxDeadLetter(label))).length === 1;
        });
      } finally {
        await relay.stop();
      }
      expect(await rows(label)).toEqual([]);
      expect(await rows(outboxDeadLetter(label))).toMatchObject([
        { dead_source: label, dead_reason: "max-attempts", dead_attempts: 3 },
      ]);
    } finally {
      await target.shutdown();
      await own.stop();
    }
  });
}

describe("the outbox relay on postgres.js", () => {
  const sql = postgres(requireEnv("POSTGRES_URL"), { onnotice: () => {}, max: 4 });
  relaySuite(
    async () => {
      const driver = new PostgresJsDriver(sql);
      const outbox = await new PostgresBroker({
        driver,
        table: "outbox_live_js",
        ensureSchema: true,
      }).connectOutbox();
      return { driver, outbox };
    },
    () => sql.end(),
  );
});

describe("the outbox relay on PGlite", () => {
  let db: PGlite | undefined;
  relaySuite(
    async () => {
      db = await PGlite.create();
      const driver = new PgliteDriver(db);
      const outbox = await new PostgresBroker({ driver, ensureSchema: true }).connectOutbox();
      return { driver, outbox };
    },
    async () => {
      await db?.close();
    },
  );
});
