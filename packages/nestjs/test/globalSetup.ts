import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis, NATS and Kafka servers (idempotently) and exports their addresses to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis", "nats", "kafka"]);
}
