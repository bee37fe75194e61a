import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts our PostgreSQL cluster, and the Redis server and Kafka broker the outbox relays to
// (idempotently), and exports POSTGRES_URL, REDIS_URL and KAFKA_BROKERS to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["postgres", "redis", "kafka"]);
}
