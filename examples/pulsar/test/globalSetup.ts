import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// Starts Pulsar standalone (idempotently) and exports PULSAR_URL to the workers, for the live test.
export default async function setup(): Promise<void> {
  await ensureBrokers(["pulsar"]);
}
