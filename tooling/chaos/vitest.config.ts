import { defineProject } from "vitest/config";

// The chaos tooling's own logic (checker, seeded schedule, report): no broker needed.
export default defineProject({
  test: {
    name: "chaos",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
  },
});
