import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Redis (idempotently) and exports REDIS_URL to the workers, for the live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis"]);
}
