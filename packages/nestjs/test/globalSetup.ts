import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis instances (idempotently) and exports REDIS_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis"]);
}
