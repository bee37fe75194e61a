import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. Live tests read the addresses the global setup exports.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "redis",
    sequence: { groupOrder: 1 },
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The cluster and Sentinel tests are a project of their own (vitest.cluster.config.ts).
    exclude: ["test/cluster/**"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
