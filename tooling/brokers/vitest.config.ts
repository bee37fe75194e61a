import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "brokers",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    // A restart of a shared broker runs after everything else (vitest.restart.config.ts).
    exclude: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    setupFiles: ["./test/setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
