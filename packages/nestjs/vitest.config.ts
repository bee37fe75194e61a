import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. The live tests read the Redis address the global setup exports.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "nestjs",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
