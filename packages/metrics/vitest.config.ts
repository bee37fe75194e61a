import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. The Redis test reads the addresses the global setup exports.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "metrics",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    // Those stop a shared broker: their own project, after every other (vitest.restart.config.ts).
    exclude: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
