import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the NATS servers (idempotently) and exports NATS_URL to the workers, for the live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["nats"]);
}
