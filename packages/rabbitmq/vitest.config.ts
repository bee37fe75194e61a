import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. Live tests read RABBITMQ_URL and the management API's address,
// which the global setup exports after starting the node.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "rabbitmq",
    sequence: { groupOrder: 1 },
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // A restart of the shared node runs after everything else (vitest.restart.config.ts); the
    // cluster's tests are a project of their own (vitest.cluster.config.ts).
    exclude: ["test/**/*.restart.test.ts", "test/cluster/**"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
