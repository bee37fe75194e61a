import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts our PostgreSQL cluster and the Redis server the outbox relays to (idempotently), and exports
// POSTGRES_URL and REDIS_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["postgres", "redis"]);
}
