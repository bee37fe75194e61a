// @ts-check
// How a test reads what ensureBrokers exported: a variable that is missing fails the test with the
// fix, never skips it.

/** The broker whose `env()` exports a variable, by the variable's prefix (the longest first). */
const owners = /** @type {const} */ ([
  ["KAFKA_CLUSTER_", "kafka-cluster"],
  ["KAFKA_", "kafka"],
  ["REDIS_CLUSTER_", "redis-cluster"],
  ["REDIS_SENTINEL", "redis-sentinel"],
  ["REDIS_", "redis"],
  ["PULSAR_", "pulsar"],
  ["POSTGRES_", "postgres"],
  ["RABBITMQ_CLUSTER_", "rabbitmq-cluster"],
  ["RABBITMQ_", "rabbitmq"],
  ["NATS_CLUSTER_", "nats-cluster"],
  ["NATS_", "nats"],
]);

/**
 * The value of a variable a global setup's `ensureBrokers` exported; throws naming the broker and
 * how to start it when it is not set.
 * @param {string} name
 * @returns {string}
 */
export function requireEnv(name) {
  const value = process.env[name];
  if (value !== undefined && value !== "") return value;
  const broker = owners.find(([prefix]) => name.startsWith(prefix))?.[1];
  if (broker === undefined)
    throw new Error(`${name} is not set, and no broker of tooling/brokers exports it`);
  throw new Error(
    `${name} is not set: ensureBrokers(["${broker}"]) exports it from the global setup of each test project that needs ${broker}, and that setup did not run, failed, or left ${broker} out (RUSTSTREAM_BROKERS narrows this tool's smoke tests). Run the tests through vitest from the repository root (\`node tooling/pnpm.mjs exec vitest run --project <project>\`), or start ${broker} and export its variables: \`node tooling/brokers/src/cli.mjs up ${broker} && eval "$(node tooling/brokers/src/cli.mjs env ${broker})"\``,
  );
}
