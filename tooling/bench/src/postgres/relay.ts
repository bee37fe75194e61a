// The outbox relay row of bench:postgres: orders written to the package's outbox table in
// transactions (`outbox.publish` in the caller's transaction, 500 to a commit), then relayed by
// `outbox.relay` at its defaults (64 rows a claim, published side by side, no partition keys) to a
// Redis stream. Redis, because the outbox is for reaching another broker, and an XADD on loopback
// is confirmed in far less than the relay's claim and settle cost on PostgreSQL, so the rate is the
// relay's; relaying into a queue of the same server would have the target's inserts and wake-ups
// compete with the relay's own statements. Checked after: the outbox table empty (every row marked
// sent) and the stream holding exactly one entry per order.
import type { Publisher } from "@ruststream/core";
import { PostgresBroker, type PostgresOutbox } from "@ruststream/postgres";
import { RedisBroker } from "@ruststream/redis";
import type { Redis } from "ioredis";
import type pg from "pg";
import { type Drained, Tally } from "../kafka/tally.js";
import { type Order, orderPayload } from "../redis/drain/order.js";
import type { RelayTrial } from "./trial.js";

const perCommit = 500;

/** Creates the trial's outbox table and commits its orders, `perCommit` to a transaction. */
export async function fillOutbox(sql: pg.Pool, trial: RelayTrial): Promise<void> {
  const outbox: PostgresOutbox = await new PostgresBroker({
    url: trial.url,
    table: trial.table,
    ensureSchema: true,
  }).connectOutbox();
  const tx = await sql.connect();
  try {
    for (let from = 0; from < trial.count; from += perCommit) {
      await tx.query("BEGIN");
      for (let i = from; i < Math.min(trial.count, from + perCommit); i++) {
        await outbox.publish(
          tx,
          { broker: trial.label, name: trial.stream },
          { payload: orderPayload(i) },
        );
      }
      await tx.query("COMMIT");
    }
    await tx.query(`ANALYZE ${trial.table}_outbox`);
  } finally {
    tx.release();
    await outbox.close();
  }
}

/** Throws unless the outbox table is empty and the stream holds `count` entries; drops both. */
export async function checkRelay(
  sql: pg.Pool,
  redis: Redis,
  where: string,
  { table, stream, count }: RelayTrial,
): Promise<void> {
  const { rows } = await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}_outbox`);
  const entries = await redis.xlen(stream);
  if (rows[0]!.n !== "0" || entries !== count) {
    throw new Error(
      `${where}: ${rows[0]!.n} outbox rows left, ${entries} of ${count} entries in ${stream}`,
    );
  }
  await redis.del(stream);
  await sql.query(`DROP TABLE ${table}_outbox`);
}

export async function relayOutbox({
  url,
  redisUrl,
  table,
  label,
  count,
}: RelayTrial): Promise<Drained> {
  const outbox = await new PostgresBroker({ url, table }).connectOutbox();
  const redis = await new RedisBroker({ url: redisUrl }).connect();
  try {
    const publisher = await redis.defaultPublishPolicy().pair(redis);
    const tally = new Tally(count);
    const decoder = new TextDecoder();
    // The relay's target: the Redis publisher, each order counted once Redis confirmed it.
    const counted: Publisher<never> = {
      publish: async (message) => {
        const receipt = await publisher.publish(message);
        tally.add(JSON.parse(decoder.decode(message.payload)) as Order);
        return receipt;
      },
    };
    const relay = await outbox.relay({ targets: { [label]: counted } });
    await tally.done;
    // Finishes the last claims' settles: their rows are then deleted.
    await relay.stop();
    return tally.drained();
  } finally {
    await outbox.close();
    await redis.shutdown();
  }
}
