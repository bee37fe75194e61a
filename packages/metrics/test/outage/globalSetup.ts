import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Kafka and Pulsar (idempotently) and exports KAFKA_BROKERS and PULSAR_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["kafka", "pulsar"]);
}
