import { defineProject } from "vitest/config";

// The outage tests that stop a broker every project's live tests share (the Kafka node, the Pulsar
// standalone, the RabbitMQ node, the plain NATS server), and PostgreSQL's, which stops
// tooling/brokers' restartable cluster: a project of their own, in the group that starts once every
// other project's group has ended (as tooling/brokers' restart tests), each test holding its server
// alone while it stops it. Workspace packages resolve to their source.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "metrics (restarts)",
    include: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/outage/globalSetup.ts"],
    sequence: { groupOrder: 3 },
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
