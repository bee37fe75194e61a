import { defineConfig } from "vitest/config";

// One vitest run covers every package; each project brings its own config (and, for
// projects that need a real broker, a global setup that starts it through tooling/brokers).
// `npm test` adds the tally's reporter (tooling/setup/tallyReporter.mjs) to every run it makes.
//
// Every project names its group (`sequence.groupOrder`), and vitest runs the groups one after
// another, in that order: 1, the projects sharing the brokers; 2, the three cluster projects, each
// file alone on one worker (a group may not mix worker counts: vitest throws); 3, the restarts of
// the shared brokers, once every project using them has ended. Only the type tests (core's and
// pulsar's *.test-d.ts, no broker) come after, as vitest puts them in a group past the highest.
// None is left at 0: vitest puts a project of order 0 on one worker in a group run after every
// numbered one, and vitest 5 gives every project one worker on this machine, so the restarts
// would run first (tooling/setup/README.md). tooling/setup/test/groupOrder.test.ts checks it.
export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      // The Redis package against a cluster and a Sentinel set: a project of its own, whose global
      // setup starts them; group 2, as the two below.
      "packages/redis/vitest.cluster.config.ts",
      // The NATS package against a three-node JetStream cluster, likewise.
      "packages/nats/vitest.cluster.config.ts",
      // The RabbitMQ package against a three-node cluster, likewise.
      "packages/rabbitmq/vitest.cluster.config.ts",
      "tooling/*/vitest.config.ts",
      // The hard restart of the shared Pulsar standalone, the metrics package's outage tests, which
      // stop the shared Kafka node, Pulsar standalone and RabbitMQ node, the RabbitMQ node's
      // restart, and PostgreSQL's (on a cluster of its own): group 3, started once groups 1 and 2
      // (the examples and docs below included) have ended.
      "tooling/brokers/vitest.restart.config.ts",
      "packages/metrics/vitest.restart.config.ts",
      "packages/postgres/vitest.restart.config.ts",
      "packages/rabbitmq/vitest.restart.config.ts",
      "examples/*/vitest.config.ts",
      "docs/vitest.config.ts",
    ],
  },
});
