import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";
import { ensureBuilt } from "./build.js";

// The entries under test are the built ones: whatever dist is missing or older than its sources is
// built first (tsup). Then Pulsar and Kafka, whose addresses ensureBrokers exports to the workers.
export default async function setup(): Promise<void> {
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  ensureBuilt(log);
  await ensureBrokers(["pulsar", "kafka"], log);
}
