import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so tests
// never run against a stale build. Live tests read PULSAR_URL and PULSAR_ADMIN_URL, which the global
// setup exports after starting the standalone broker.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "pulsar",
    sequence: { groupOrder: 1 },
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Type tests (*.test-d.ts) run in the same run, so a broken type contract fails it.
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.json",
      // Errors outside the type tests are `pnpm typecheck`'s to report.
      ignoreSourceErrors: true,
    },
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
