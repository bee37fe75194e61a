// graphile-worker (the `graphile` rows of bench:postgres): jobs of one task filled by its own bulk
// insert (`addJobs`), checked after the row, and drained by `run()` at the batching its performance
// docs recommend for a busy queue as the starting point: `concurrency` jobs at once, a local queue
// of `concurrency + 1` jobs fetched ahead, completions batched over 25 ms
// (`completeJobBatchDelay`, `failJobBatchDelay`); its poll interval at the default (2 s; new jobs
// wake it by LISTEN/NOTIFY). `localQueue` sets another local queue (its docs' own load test takes
// 500 jobs ahead). graphile-worker lives in a schema of its own.
import { Logger, makeWorkerUtils, run, type WorkerUtils } from "graphile-worker";
import type pg from "pg";
import { type Drained, Tally } from "../kafka/tally.js";
import { type Order, orderPayload } from "../redis/drain/order.js";
import type { GraphileTrial } from "./trial.js";

/** graphile-worker's schema on the bench's database. */
export const graphileSchema = "bench_graphile";
const insertBatch = 5_000;

/** Its errors on stderr, nothing else (it logs every start and stop at info). */
const errorsOnly = new Logger((scope) => (level, message) => {
  if (level === "error") console.error(`graphile-worker ${JSON.stringify(scope)}: ${message}`);
});

/** The bench's own WorkerUtils: it installs the schema and fills the jobs. */
export async function graphileFiller(url: string): Promise<WorkerUtils> {
  const utils = await makeWorkerUtils({
    connectionString: url,
    schema: graphileSchema,
    logger: errorsOnly,
  });
  await utils.migrate();
  return utils;
}

export async function fillGraphile(utils: WorkerUtils, trial: GraphileTrial): Promise<void> {
  for (let from = 0; from < trial.count; from += insertBatch) {
    const jobs = [];
    for (let i = from; i < Math.min(trial.count, from + insertBatch); i++) {
      jobs.push({
        identifier: trial.task,
        payload: JSON.parse(orderPayload(i).toString("utf8")) as Order,
      });
    }
    await utils.addJobs(jobs);
  }
}

/** Throws unless no job of the task is left (graphile-worker deletes a job once it completed). */
export async function checkGraphile(
  sql: pg.Pool,
  where: string,
  { task }: GraphileTrial,
): Promise<void> {
  const { rows } = await sql.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${graphileSchema}._private_jobs j
       JOIN ${graphileSchema}._private_tasks t ON t.id = j.task_id WHERE t.identifier = $1`,
    [task],
  );
  if (rows[0]!.n !== "0")
    throw new Error(`${where}: graphile-worker still holds ${rows[0]!.n} jobs of ${task}`);
  await sql.query(`DELETE FROM ${graphileSchema}._private_tasks WHERE identifier = $1`, [task]);
}

export async function drainGraphile(
  { url, task, count }: GraphileTrial,
  workers: number,
  localQueue = workers + 1,
): Promise<Drained> {
  const tally = new Tally(count);
  const runner = await run({
    connectionString: url,
    schema: graphileSchema,
    concurrency: workers,
    noHandleSignals: true,
    logger: errorsOnly,
    taskList: {
      [task]: async (payload) => {
        tally.add(payload as Order);
      },
    },
    preset: {
      worker: {
        localQueue: { size: localQueue },
        completeJobBatchDelay: 25,
        failJobBatchDelay: 25,
      },
    },
  });
  await tally.done;
  // Flushes the batched completions: the last job is then deleted from the table.
  await runner.stop();
  return tally.drained();
}
