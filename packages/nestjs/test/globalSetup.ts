import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis and NATS servers (idempotently) and exports REDIS_URL and NATS_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis", "nats"]);
}
