import { brokers } from "@ruststream/tooling-testkit/brokers";

// Starts the three-node RabbitMQ cluster (idempotently) and exports its addresses. What this setup
// started it stops at the end; someone's `pnpm brokers up rabbitmq-cluster` stays up.
export default async function setup(): Promise<() => Promise<void>> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const result = await brokers["rabbitmq-cluster"].up(log);
  if (!result.already)
    log(`[brokers] rabbitmq-cluster up at ${result.address} in ${(result.ms / 1000).toFixed(1)} s`);
  Object.assign(process.env, brokers["rabbitmq-cluster"].env());
  return async () => {
    if (!result.already) await brokers["rabbitmq-cluster"].down(log);
  };
}
