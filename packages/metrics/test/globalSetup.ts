import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis test instances, the PostgreSQL cluster, the NATS servers, the RabbitMQ node and
// the Kafka cluster (idempotently) and exports REDIS_URL, POSTGRES_URL, NATS_URL, RABBITMQ_URL and
// KAFKA_BROKERS to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis", "postgres", "nats", "rabbitmq", "kafka"]);
}
