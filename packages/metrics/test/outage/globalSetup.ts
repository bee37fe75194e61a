import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Kafka, Pulsar, RabbitMQ and NATS (idempotently) and exports KAFKA_BROKERS, PULSAR_URL,
// RABBITMQ_URL and NATS_URL to the workers. PostgreSQL's test starts and stops its own cluster.
export default async function setup(): Promise<void> {
  await ensureBrokers(["kafka", "pulsar", "rabbitmq", "nats"]);
}
