// A queue in the scenarios' table on the PostgreSQL cluster of tooling/brokers, or, for the
// scenario that restarts the server, on the restartable cluster (its own data and port: the shared
// cluster is never stopped). The runner creates the table and publishes the load straight to the
// server; the services connect through the fault proxy.
import { PostgresBroker, PostgresPublish } from "@ruststream/postgres";
import { brokers, ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import pg from "pg";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import { POSTGRES_TABLE } from "../service/brokerBounds.js";
import type { Target } from "./target.js";

export async function postgresTarget(
  key: string,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  restartable: boolean,
  log: (line: string) => void,
): Promise<Target> {
  let direct: string;
  if (restartable) direct = await brokers.postgres.restartable.up(log);
  else {
    await ensureBrokers(["postgres"], log);
    direct = requireEnv("POSTGRES_URL");
  }
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
    // The restartable cluster is stopped whatever happened (it is the scenario's to stop); a
    // cleanup that cannot reach the server says so rather than hide the run's own error.
    async cleanup() {
      const client = new pg.Client({ connectionString: direct });
      try {
        await client.connect();
        await client.query(`DELETE FROM ${POSTGRES_TABLE} WHERE queue = ANY($1)`, [
          [key, `${key}.dlq`],
        ]);
      } catch (error) {
        log(`[chaos] deleting the queues ${key}, ${key}.dlq: ${String(error)}`);
      } finally {
        await client.end().catch(() => {});
        if (restartable) await brokers.postgres.restartable.down();
      }
    },
  };
}
