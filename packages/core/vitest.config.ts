import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "core",
    sequence: { groupOrder: 1 },
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Type tests (*.test-d.ts) run in the same `pnpm test`, so CI fails on a broken type contract.
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.json",
      // Errors outside the type tests are `pnpm typecheck`'s to report.
      ignoreSourceErrors: true,
    },
  },
});
