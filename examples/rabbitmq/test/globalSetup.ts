import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the RabbitMQ node (idempotently) and exports RABBITMQ_URL to the workers, for the live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["rabbitmq"]);
}
