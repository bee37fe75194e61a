import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts PostgreSQL and Kafka (idempotently) and exports POSTGRES_URL and KAFKA_BROKERS to the
// workers, for the live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["postgres", "kafka"]);
}
