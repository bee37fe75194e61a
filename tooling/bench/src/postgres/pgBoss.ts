// pg-boss (the `pgboss` rows of bench:postgres): its queue filled by its own bulk insert
// (`insert(name, jobs)`), checked after the row, and drained by `work()` at the settings its docs
// give for a busy queue: `batchSize` jobs a fetch (the claim the other rows take), `localConcurrency`
// workers, and `burstWhenBatchFull` (fetch again at once while a fetch comes back full; without it
// each worker waits `pollingIntervalSeconds`, 2 s, between fetches). The handler takes the batch
// and returns: pg-boss completes its jobs in one statement. pg-boss lives in a schema of its own.
import type pg from "pg";
import { PgBoss } from "pg-boss";
import { type Drained, Tally } from "../kafka/tally.js";
import { type Order, orderPayload } from "../redis/drain/order.js";
import type { PgBossTrial } from "./trial.js";

/** pg-boss's schema on the bench's database. */
export const pgBossSchema = "bench_pgboss";
const insertBatch = 5_000;

/** The bench's own pg-boss instance (no workers, no maintenance): it makes and fills the queues. */
export async function pgBossFiller(url: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: pgBossSchema,
    supervise: false,
    schedule: false,
    max: 2,
  });
  boss.on("error", (error) => console.error("pg-boss (filler):", error));
  return boss.start();
}

export async function fillPgBoss(boss: PgBoss, trial: PgBossTrial): Promise<void> {
  await boss.createQueue(trial.queue);
  for (let from = 0; from < trial.count; from += insertBatch) {
    const jobs = [];
    for (let i = from; i < Math.min(trial.count, from + insertBatch); i++) {
      jobs.push({ data: JSON.parse(orderPayload(i).toString("utf8")) as Order });
    }
    await boss.insert(trial.queue, jobs);
  }
}

/** Throws unless every job of the queue completed on its first attempt; then deletes the queue. */
export async function checkPgBoss(
  sql: pg.Pool,
  boss: PgBoss,
  where: string,
  { queue, count }: PgBossTrial,
): Promise<void> {
  const { rows } = await sql.query<{ state: string; retried: string; n: string }>(
    `SELECT state, count(*) FILTER (WHERE retry_count > 0) AS retried, count(*) AS n
       FROM ${pgBossSchema}.job WHERE name = $1 GROUP BY state`,
    [queue],
  );
  const completed = rows.find((r) => r.state === "completed");
  const others = rows.filter((r) => r.state !== "completed");
  if (completed?.n !== String(count) || others.length > 0 || completed.retried !== "0") {
    throw new Error(
      `${where}: pg-boss queue ${queue} holds ${JSON.stringify(rows)}, not ${count} completed once`,
    );
  }
  await boss.deleteQueue(queue);
}

export async function drainPgBoss(
  { url, queue, count }: PgBossTrial,
  workers: number,
  batch: number,
): Promise<Drained> {
  const boss = new PgBoss({ connectionString: url, schema: pgBossSchema });
  const failures: unknown[] = [];
  boss.on("error", (error) => failures.push(error));
  await boss.start();
  try {
    const tally = new Tally(count);
    await boss.work<Order>(
      queue,
      { batchSize: batch, localConcurrency: workers, burstWhenBatchFull: true },
      async (jobs) => {
        for (const job of jobs) tally.add(job.data);
      },
    );
    await tally.done;
    // Returns once each worker's last batch is completed in the table.
    await boss.offWork(queue, { wait: true });
    const drained = tally.drained();
    if (failures.length > 0)
      throw new Error(`pg-boss reported ${failures.length} errors: ${String(failures[0])}`);
    return drained;
  } finally {
    await boss.stop({ graceful: true });
  }
}
