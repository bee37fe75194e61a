import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the PostgreSQL cluster (idempotently) and exports POSTGRES_URL to the workers, for the
// live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["postgres"]);
}
