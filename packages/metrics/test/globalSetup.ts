import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis test instances, the PostgreSQL cluster, the NATS servers, the RabbitMQ node, the
// Kafka cluster and the Pulsar broker (idempotently) and exports REDIS_URL, POSTGRES_URL, NATS_URL,
// RABBITMQ_URL, KAFKA_BROKERS and PULSAR_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis", "postgres", "nats", "rabbitmq", "kafka", "pulsar"]);
}
