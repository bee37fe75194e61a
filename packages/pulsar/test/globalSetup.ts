import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Pulsar standalone (idempotently) and exports PULSAR_URL and PULSAR_ADMIN_URL to the workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["pulsar"]);
}
