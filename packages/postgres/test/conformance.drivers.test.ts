import { PGlite } from "@electric-sql/pglite";
import { conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import postgres from "postgres";
import { afterAll, beforeAll, describe } from "vitest";
import { PgliteDriver, PostgresBroker, PostgresJsDriver, PostgresQueue } from "../src/index.js";
import { queueCapabilities as capabilities } from "./capabilities.js";

// The broker over the seam's other two clients, leased claims: postgres.js against the real
// server, and PGlite in the process (one connection, so no transactional queue on it).

const makeSource = (name: string) => new PostgresQueue(name, { pollMs: 200 });
const timing = { arrivalMs: 5000, silenceMs: 300 };

function suites(makeBroker: () => PostgresBroker): void {
  const factories = { makeBroker, makeSource, capabilities, timing };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.brokerMovedRetry(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking(factories);
  conformance.transactions(factories);
  conformance.requestReply(factories);
}

describe("postgres.js", () => {
  const sql = postgres(requireEnv("POSTGRES_URL"), { onnotice: () => {}, max: 20 });
  afterAll(() => sql.end());
  suites(
    () =>
      new PostgresBroker({
        driver: new PostgresJsDriver(sql),
        table: "conformance_queue_js",
        ensureSchema: true,
      }),
  );
});

describe("PGlite", () => {
  let db: PGlite | undefined;
  beforeAll(async () => {
    db = await PGlite.create();
  }, 60_000);
  afterAll(() => db?.close());
  suites(() => {
    if (db === undefined) throw new Error("PGlite did not start");
    return new PostgresBroker({ driver: new PgliteDriver(db), ensureSchema: true });
  });
});
