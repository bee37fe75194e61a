import { defineConfig } from "vitest/config";

// What the test command runs on each maintained Node line besides the one the whole suite runs on:
// every project that needs no broker (of the docs, the guides' snippets and the link rules), and of
// the others (the broker packages and their examples, the CLI, metrics) the files that start none:
// their own configs start a real broker in a global setup, so those files are listed here without one.
// Every project is in group 1 (`sequence.groupOrder`), as the package configs it lists: none restarts
// a broker here, and one group runs them as the whole suite's group 1 does (vitest.config.ts).
const source = { conditions: ["@ruststream/source"] };

function inProcess(pkg: string, files: string[], what = "in-process", root = `packages/${pkg}`) {
  return {
    root,
    resolve: source,
    ssr: { resolve: source },
    test: {
      name: `${pkg} (${what})`,
      sequence: { groupOrder: 1 },
      include: files.map((f) => `test/${f}.test.ts`),
      testTimeout: 60_000,
    },
  };
}

export default defineConfig({
  test: {
    projects: [
      "packages/core/vitest.config.ts",
      "packages/testing/vitest.config.ts",
      "packages/file/vitest.config.ts",
      "packages/asyncapi/vitest.config.ts",
      "packages/health/vitest.config.ts",
      "packages/otel/vitest.config.ts",
      // The fuzz suite's short budget: decoders on bytes, no broker.
      "tooling/fuzz/vitest.config.ts",
      // The examples on a server: their in-process test (their live test needs the broker).
      "examples/broker-template/vitest.config.ts",
      "examples/file/vitest.config.ts",
      "examples/orders/vitest.config.ts",
      ...["redis", "kafka", "pulsar", "rabbitmq", "postgres"].map((broker) =>
        inProcess(`example-${broker}`, ["app"], "in-process", `examples/${broker}`),
      ),
      inProcess("example-nats", ["app"], "in-process", "examples/nats"),
      // The guides' code on each line; the site's own build and browser test run on the main one.
      {
        root: "docs",
        resolve: source,
        ssr: { resolve: source },
        test: {
          name: "docs (snippets)",
          sequence: { groupOrder: 1 },
          include: ["test/snippets.test.ts", "test/links.test.ts"],
          testTimeout: 240_000,
        },
      },
      inProcess("kafka", [
        "conformance.inProcess",
        "inProcessTransactions",
        "tracker",
        "assignmentWait",
        "leaderWait",
        "readmeExample",
      ]),
      inProcess("redis", [
        "conformance.inProcess",
        "publishPolicy",
        "readmeExample",
        "deployments",
        "slots",
      ]),
      inProcess("rabbitmq", ["conformance.inProcess", "readmeExample"]),
      inProcess("pulsar", [
        "conformance.inProcess",
        "names",
        "codecs",
        "protocol",
        "consumerClosedByBroker",
        "readmeExample",
      ]),
      inProcess("nats", ["conformance.inProcess"]),
      inProcess("postgres", ["conformance.inProcess", "store.memory"]),
      // The CLI and metrics files that start no broker (their projects' global setups start Redis).
      inProcess(
        "cli",
        [
          "appGuard",
          "asyncapi",
          "loading",
          "operations",
          "optionalPackage",
          "orders",
          "supervise",
          "usage",
          "watch",
        ],
        "no broker",
      ),
      inProcess("metrics", ["series", "readme"], "no broker"),
      // The NestJS transport on the file broker (its Redis file needs the server).
      inProcess("nestjs", ["file", "behaviour"], "no broker"),
      // The scaffolder's unit tests; its generated projects' test runs on the whole suite's line.
      inProcess("create", ["args", "packageName", "choices", "writeProject", "main"], "unit"),
    ],
  },
});
