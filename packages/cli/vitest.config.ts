import { defineProject } from "vitest/config";

// The tests start the CLI as real processes (the source binary, through tsx, with the workspace
// packages resolved to their source), so a run never tests a stale build. The Redis workers test
// reads the address the global setup exports.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "cli",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
