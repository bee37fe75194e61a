import { defineProject } from "vitest/config";

// The generated-project test type-checks and runs each broker's new project against the
// workspace's packages (their source): a few tsc and vitest processes, hence the long timeout.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "create",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    testTimeout: 240_000,
  },
});
