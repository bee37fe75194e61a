import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. Live tests read POSTGRES_URL, which the global setup exports.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "postgres",
    sequence: { groupOrder: 1 },
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // The server restarted under load is a project of its own (vitest.restart.config.ts).
    exclude: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
