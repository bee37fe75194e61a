import { brokers } from "@ruststream/tooling-testkit/brokers";

// Starts the Redis Cluster and the Sentinel set (idempotently) and exports their addresses and
// passwords to the workers. What this setup started it stops at the end: eleven Redis processes are
// not worth keeping for every run; someone's `pnpm brokers up redis-cluster` stays up.
export default async function setup(): Promise<() => Promise<void>> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started: ("redis-cluster" | "redis-sentinel")[] = [];
  for (const name of ["redis-cluster", "redis-sentinel"] as const) {
    const result = await brokers[name].up(log);
    if (!result.already) {
      started.push(name);
      log(`[brokers] ${name} up at ${result.address} in ${(result.ms / 1000).toFixed(1)} s`);
    }
    Object.assign(process.env, brokers[name].env());
  }
  return async () => {
    for (const name of started) await brokers[name].down(log);
  };
}
