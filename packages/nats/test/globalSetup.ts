import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts the NATS servers (idempotently) and exports NATS_URL and the credentials' variables.
export default async function setup(): Promise<void> {
  await ensureBrokers(["nats"]);
}
