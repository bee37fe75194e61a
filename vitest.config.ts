import { defineConfig } from "vitest/config";

// One vitest run covers every package; each project brings its own config (and, for
// projects that need a real broker, a global setup that starts it through tooling/brokers).
// On CI a JSON report is written too, from which .ci/run prints the closing tally.
export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      "tooling/*/vitest.config.ts",
      "examples/*/vitest.config.ts",
    ],
    ...(process.env.CI
      ? {
          reporters: ["default", ["json", { outputFile: ".cache/vitest-report.json" }]],
        }
      : {}),
  },
});
