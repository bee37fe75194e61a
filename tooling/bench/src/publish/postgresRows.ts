// PostgreSQL: the app's publish (PostgresBroker's publisher over its pool of 10: an INSERT per
// publish, its wake-up sent after, coalesced with the others of a few milliseconds) against `pg`
// over a pool of the same size: one INSERT per publish (the payload, the content type header, the
// partition key, as the package writes them), `depth` outstanding, sent by its text and as a
// prepared statement; and, as the Redis table's
// pipeline, a multi-row INSERT of `depth` rows awaited, then the next; and the one INSERT with a
// `pg_notify`, as the package woke its subscribers before. Each run onto a fresh queue table
// (`schemaSql`), its row count checked after. With POSTGRES_AT=<git ref>, one more row: app.publish
// on `@ruststream/postgres` as that ref had it (../packageAt.ts), for a change measured before and
// after in one run.
import * as thisTree from "@ruststream/postgres";
import pg from "pg";
import { packageAt } from "../packageAt.js";
import { appPublishRow, type OnFresh } from "./appRow.js";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { batched, type Timed, windowed } from "./window.js";

const table = "PostgreSQL queue table";
const queue = "orders";
/** The package's default pool size. */
const poolSize = 10;
let tables = 0;
const contentType = Buffer.from(bytesContentType);

export async function postgresRows(url: string): Promise<PublishRow[]> {
  const ref = process.env.POSTGRES_AT || undefined;
  const earlier =
    ref === undefined ? undefined : (await packageAt<typeof thisTree>("postgres", ref)).module;
  let current = "";
  const onFresh: OnFresh = async (row, count, publish) => {
    current = `bench_publish_${process.pid}_${tables++}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(thisTree.schemaSql(current));
    const timed = await publish(queue);
    const { rows } = await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${current}`);
    expectStored(row, current, Number(rows[0]!.n), count);
    await admin.query(`DROP TABLE ${current}`);
    await admin.end();
    return timed;
  };
  const raw = (
    name: string,
    run: (pool: pg.Pool, count: number, depth: number) => Promise<Timed>,
  ): PublishRow => ({
    name,
    broker: table,
    baseline: true,
    run: (count, depth) =>
      onFresh(name, count, async () => {
        const pool = new pg.Pool({ connectionString: url, max: poolSize });
        try {
          return await run(pool, count, depth);
        } finally {
          await pool.end();
        }
      }),
  });
  const columns = "(queue, payload, header_names, header_values, partition_key)";
  return [
    raw("raw pg INSERT", (pool, count, depth) =>
      windowed(count, depth, (i) =>
        pool.query(
          `INSERT INTO ${current} ${columns} VALUES ($1, $2, $3::text[], $4::bytea[], $5::bytea)`,
          [queue, payloadOf(i), ["content-type"], [contentType], Buffer.from(keyOf(i))],
        ),
      ),
    ),
    // The same INSERT as a named statement, prepared on each pooled connection the first time it
    // runs there, as the package's publish goes since 2026-12-07.
    raw("raw pg prepared INSERT", (pool, count, depth) =>
      windowed(count, depth, (i) =>
        pool.query({
          name: `bench_insert_${current}`,
          text: `INSERT INTO ${current} ${columns} VALUES ($1, $2, $3::text[], $4::bytea[], $5::bytea)`,
          values: [queue, payloadOf(i), ["content-type"], [contentType], Buffer.from(keyOf(i))],
        }),
      ),
    ),
    // The same INSERT with the wake-up the package sent with every publish before: PostgreSQL takes one
    // lock for the whole server before the commit of a transaction that notified and holds it
    // until after, so these commit one at a time where plain INSERTs commit together.
    raw("raw pg INSERT with pg_notify", (pool, count, depth) =>
      windowed(count, depth, (i) =>
        pool.query(
          `WITH ins AS (INSERT INTO ${current} ${columns} VALUES ($1, $2, $3::text[], $4::bytea[], $5::bytea) RETURNING queue) SELECT pg_notify($6, queue) FROM ins`,
          [queue, payloadOf(i), ["content-type"], [contentType], Buffer.from(keyOf(i)), current],
        ),
      ),
    ),
    raw("raw pg multi-row INSERT", (pool, count, depth) =>
      batched(count, depth, async (from, to) => {
        const values: unknown[] = [];
        const tuples: string[] = [];
        for (let i = from; i < to; i++) {
          const at = values.length;
          values.push(queue, payloadOf(i), ["content-type"], [contentType], Buffer.from(keyOf(i)));
          tuples.push(
            `($${at + 1}, $${at + 2}, $${at + 3}::text[], $${at + 4}::bytea[], $${at + 5}::bytea)`,
          );
        }
        await pool.query(`INSERT INTO ${current} ${columns} VALUES ${tuples.join(", ")}`, values);
      }),
    ),
    appPublishRow(
      table,
      (app) => app.broker(new thisTree.PostgresBroker({ url, table: current })),
      onFresh,
    ),
    ...(earlier === undefined
      ? []
      : [
          appPublishRow(
            table,
            (app) => app.broker(new earlier.PostgresBroker({ url, table: current })),
            onFresh,
            `app.publish at ${ref}`,
          ),
        ]),
  ];
}
