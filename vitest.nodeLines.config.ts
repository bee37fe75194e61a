import { defineConfig } from "vitest/config";

// What the test command runs on each maintained Node line besides the one the whole suite runs on:
// every project that needs no broker, and the broker packages' in-process suites (their own
// configs start a real broker in a global setup, so those files are listed here without one).
const source = { conditions: ["@ruststream/source"] };

function inProcess(pkg: string, files: string[]) {
  return {
    root: `packages/${pkg}`,
    resolve: source,
    ssr: { resolve: source },
    test: { name: `${pkg} (in-process)`, include: files.map((f) => `test/${f}.test.ts`) },
  };
}

export default defineConfig({
  test: {
    projects: [
      "packages/core/vitest.config.ts",
      "packages/testing/vitest.config.ts",
      "packages/file/vitest.config.ts",
      "examples/*/vitest.config.ts",
      inProcess("kafka", [
        "conformance.inProcess",
        "inProcessTransactions",
        "tracker",
        "assignmentWait",
        "leaderWait",
      ]),
      inProcess("redis", ["conformance.inProcess", "publishPolicy"]),
      inProcess("pulsar", [
        "conformance.inProcess",
        "names",
        "codecs",
        "protocol",
        "consumerClosedByBroker",
      ]),
    ],
  },
});
