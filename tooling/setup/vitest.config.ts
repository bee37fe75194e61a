import { defineProject } from "vitest/config";

// The set-up's own checks: what the README's commands install.
export default defineProject({
  test: {
    name: "setup",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
