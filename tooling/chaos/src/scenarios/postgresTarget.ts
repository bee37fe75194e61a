// A queue in the scenarios' table on the PostgreSQL cluster of tooling/brokers, or, for the
// scenario that restarts the server, on the restartable cluster (its own data and port: the shared
// cluster is never stopped). The runner creates the table and publishes the load straight to the
// server; the services connect through the fault proxy. A transactional queue's handlers also
// write a business row each (postgresBusiness.ts), read back as the outputs and checked per row.
import { PostgresBroker, PostgresPublish } from "@ruststream/postgres";
import { brokers, ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import pg from "pg";
import type { Handled } from "../checker.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import { POSTGRES_BUSINESS_TABLE, POSTGRES_TABLE } from "../service/brokerBounds.js";
import {
  allAcked,
  businessOutputs,
  businessVerdict,
  ensureBusinessTable,
  readBusinessState,
} from "./postgresBusiness.js";
import type { Target } from "./target.js";

export async function postgresTarget(
  key: string,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  mode: { readonly restartable: boolean; readonly transactional: boolean },
  log: (line: string) => void,
): Promise<Target> {
  const { restartable, transactional } = mode;
  let direct: string;
  if (restartable) direct = await brokers.postgres.restartable.up(log);
  else {
    await ensureBrokers(["postgres"], log);
    direct = requireEnv("POSTGRES_URL");
  }
  if (transactional) await withClient(direct, ensureBusinessTable);
  const url = new URL(direct);
  if (proxy !== undefined) {
    const port = await proxy.toxiproxy.proxy(proxy.name, `${url.hostname}:${url.port}`);
    url.hostname = "127.0.0.1";
    url.port = String(port);
  }
  return {
    serviceAddress: url.toString(),
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new PostgresBroker({
        url: direct,
        table: POSTGRES_TABLE,
        ensureSchema: true,
      }).connect();
      const publisher = await new PostgresPublish().pair(broker);
      // A row's place in its key's order is its id, taken as the insert runs over the pool: two
      // inserts of a key at once have no order, so a key's messages go one after another.
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog, {
        keyBySequence: true,
      });
    },
    // The postmaster and its backends SIGKILLed at once, started again on its data (recovery from
    // the WAL): every committed row survives.
    restartBroker: restartable
      ? () => brokers.postgres.restartable.restart({ hard: true })
      : undefined,
    ...(transactional
      ? {
          // Once every row is acked (a handled row whose commit a fault failed comes back when its
          // lease ends, so the handlings alone do not say the business rows are all written).
          outputs: (expected: number, timeoutMs: number) =>
            withClient(direct, async (client): Promise<readonly Handled[]> => {
              const deadline = performance.now() + timeoutMs;
              while (!(await allAcked(client, key, expected)) && performance.now() < deadline) {
                await new Promise((resolve) => setTimeout(resolve, 250));
              }
              return businessOutputs(await readBusinessState(client, key));
            }),
          // After the replicas stopped, so no transaction is still open.
          verdict: () =>
            withClient(direct, async (client) =>
              businessVerdict(await readBusinessState(client, key)),
            ),
        }
      : {}),
    // The restartable cluster is stopped whatever happened (it is the scenario's to stop); a
    // cleanup that cannot reach the server says so rather than hide the run's own error.
    async cleanup() {
      const client = new pg.Client({ connectionString: direct });
      try {
        await client.connect();
        await client.query(`DELETE FROM ${POSTGRES_TABLE} WHERE queue = ANY($1)`, [
          [key, `${key}.dlq`],
        ]);
        if (transactional)
          await client.query(`DELETE FROM ${POSTGRES_BUSINESS_TABLE} WHERE queue = $1`, [key]);
      } catch (error) {
        log(`[chaos] deleting the queues ${key}, ${key}.dlq: ${String(error)}`);
      } finally {
        await client.end().catch(() => {});
        if (restartable) await brokers.postgres.restartable.down();
      }
    },
  };
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}
