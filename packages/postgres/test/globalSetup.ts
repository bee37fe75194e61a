import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts our PostgreSQL cluster (idempotently) and exports POSTGRES_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["postgres"]);
}
