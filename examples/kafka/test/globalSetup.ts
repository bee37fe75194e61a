import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Kafka (idempotently) and exports KAFKA_BROKERS to the workers, for the live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["kafka"]);
}
