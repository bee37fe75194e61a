import { ensureBrokers } from "@ruststream/tooling-testkit/brokers";

// The --workers test runs on the real Redis 7.0: started here (idempotently), REDIS_URL exported to
// the test workers.
export default async function setup(): Promise<void> {
  await ensureBrokers(["redis"]);
}
