import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "brokers",
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
