import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis test instances and the PostgreSQL cluster (idempotently) and exports REDIS_URL
// and POSTGRES_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis", "postgres"]);
}
