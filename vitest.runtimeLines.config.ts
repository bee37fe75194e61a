import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import nodeLines from "./vitest.nodeLines.config.ts";

// What the test command runs on Bun and on Deno (tooling/setup/runtimes.mjs), after the Node lines:
// core's and testing's suites, health's, every broker package's in-process suites (taken from the
// Node lines' config, so a new broker's come along), and the live round trip of every broker
// (test/roundTrip.test.ts, through the broker's own client, on the real server its package's global
// setup starts). Each round trip first checks it runs on the runtime the line names
// (RUSTSTREAM_RUNTIME), so the line cannot pass on Node. Not the whole of the Node lines' set: under
// vitest on Bun, a service started through tsx's loader hung, and so did the file broker's suite
// (tooling/setup/README.md, "Bun and Deno").
const onBun = process.env.RUSTSTREAM_RUNTIME === "bun";
const source = { conditions: ["@ruststream/source"] };

function roundTrip(pkg: string, setup: { global: boolean; files?: string[] }) {
  return {
    root: `packages/${pkg}`,
    resolve: source,
    ssr: { resolve: source },
    test: {
      name: `${pkg} (round trip)`,
      include: ["test/roundTrip.test.ts"],
      globalSetup: setup.global ? ["./test/globalSetup.ts"] : [],
      setupFiles: setup.files ?? [],
      testTimeout: 120_000,
      hookTimeout: 120_000,
    },
  };
}

/** The Node lines' in-process suites of the broker packages. */
function inProcessSuites(): TestProjectInlineConfiguration[] {
  return (nodeLines.test?.projects ?? []).filter(
    (p): p is TestProjectInlineConfiguration =>
      typeof p === "object" &&
      "root" in p &&
      String(p.root).startsWith("packages/") &&
      (p.test?.name as string | undefined)?.endsWith("(in-process)") === true,
  );
}

export default defineConfig({
  test: {
    projects: [
      {
        root: "packages/core",
        test: {
          name: "core",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          // On Bun, vitest's module runner hands this file zod's export `z` as undefined (zod
          // itself loads on Bun); the same schemas run on Deno and on every Node line.
          exclude: onBun ? ["test/runtime/schema.test.ts"] : [],
          // The seeded-sequence tests are CPU-bound: slower runtimes on shared cores need longer.
          testTimeout: 60_000,
        },
      },
      {
        root: "packages/testing",
        resolve: source,
        ssr: { resolve: source },
        test: {
          name: "testing",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          // On Bun two planted faults go uncaught (packages/testing/README.md, "Runtimes"): a
          // constructor's timer, as Bun's process.getActiveResourcesInfo() answers [] with a timer
          // pending, and a request that gives up before its timeout.
          exclude: onBun ? ["test/faultyBroker.test.ts"] : [],
          testTimeout: 60_000,
        },
      },
      "packages/health/vitest.config.ts",
      ...inProcessSuites(),
      roundTrip("file", { global: false }),
      roundTrip("redis", { global: true }),
      roundTrip("kafka", { global: true, files: ["./test/setup.ts"] }),
      roundTrip("pulsar", { global: true }),
      roundTrip("nats", { global: true }),
      roundTrip("rabbitmq", { global: true }),
      roundTrip("postgres", { global: true }),
    ],
  },
});
