import { defineProject } from "vitest/config";

// The test that restarts a PostgreSQL server: a project of its own, in the group that starts once
// every other project's group has ended (as tooling/brokers' restart tests). Its server is
// tooling/brokers' restartable cluster on its own port, which it starts, holds alone while it
// restarts it, and stops; the cluster the other live tests share is not touched, so no global setup.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "postgres (restarts)",
    include: ["test/**/*.restart.test.ts"],
    sequence: { groupOrder: 1 },
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
