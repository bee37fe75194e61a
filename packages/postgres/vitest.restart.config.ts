import { defineProject } from "vitest/config";

// The tests that restart a server: a project of its own, in the group that starts once every other
// project's group has ended (as tooling/brokers' restart tests). The PostgreSQL one restarts
// tooling/brokers' restartable cluster on its own port, which it starts, holds alone while it
// restarts it, and stops; the outbox's restarts the shared Kafka broker, held alone (exclusive),
// relaying from the shared PostgreSQL cluster, which the global setup starts as for the live tests.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "postgres (restarts)",
    include: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    sequence: { groupOrder: 3 },
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
