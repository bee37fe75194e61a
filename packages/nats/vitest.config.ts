import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. Live tests read NATS_URL and the credentials' variables, which
// the global setup exports after starting the servers.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "nats",
    sequence: { groupOrder: 1 },
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The cluster's tests are a project of their own (vitest.cluster.config.ts).
    exclude: ["test/cluster/**"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
