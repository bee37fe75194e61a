import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the four Redis 7.0 instances (idempotently) and exports REDIS_URL and friends to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis"]);
}
