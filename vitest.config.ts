import { defineConfig } from "vitest/config";

// One vitest run covers every package; each project brings its own config (and, for
// projects that need a real broker, a global setup that starts it through tooling/brokers).
// `npm test` adds the tally's reporter (tooling/setup/tallyReporter.mjs) to every run it makes.
export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      // The Redis package against a cluster and a Sentinel set: a project of its own, whose global
      // setup starts them.
      "packages/redis/vitest.cluster.config.ts",
      // The NATS package against a three-node JetStream cluster, likewise.
      "packages/nats/vitest.cluster.config.ts",
      // The RabbitMQ package against a three-node cluster, likewise.
      "packages/rabbitmq/vitest.cluster.config.ts",
      "tooling/*/vitest.config.ts",
      // The hard restart of the shared Pulsar standalone, the metrics package's outage tests, which
      // stop the shared Kafka node, Pulsar standalone and RabbitMQ node, the RabbitMQ node's
      // restart, and PostgreSQL's (on a cluster of its own): a group that starts after all the above.
      "tooling/brokers/vitest.restart.config.ts",
      "packages/metrics/vitest.restart.config.ts",
      "packages/postgres/vitest.restart.config.ts",
      "packages/rabbitmq/vitest.restart.config.ts",
      "examples/*/vitest.config.ts",
      "docs/vitest.config.ts",
    ],
  },
});
