import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the RabbitMQ node (idempotently) and exports RABBITMQ_URL and the rest to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["rabbitmq"]);
}
