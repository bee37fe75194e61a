import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Kafka, Pulsar and RabbitMQ (idempotently) and exports KAFKA_BROKERS, PULSAR_URL and
// RABBITMQ_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["kafka", "pulsar", "rabbitmq"]);
}
