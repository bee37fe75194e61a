import { defineConfig } from "vitest/config";

// One vitest run covers every package; each project brings its own config (and, for
// projects that need a real broker, a global setup that starts it through tooling/brokers).
// Every run also writes a JSON report, from which .ci/run prints the closing tally: written on
// every run, so a tally can only ever be this run's.
export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      "tooling/*/vitest.config.ts",
      "examples/*/vitest.config.ts",
      "docs/vitest.config.ts",
    ],
    reporters: ["default", ["json", { outputFile: ".cache/vitest-report.json" }]],
  },
});
