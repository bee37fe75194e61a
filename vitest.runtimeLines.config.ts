import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import nodeLines from "./vitest.nodeLines.config.ts";

// What the test command runs on Bun and on Deno (tooling/setup/runtimes.mjs), after the Node lines:
// the suites of core, testing, health, file, AsyncAPI, otel, metrics, NestJS and the CLI,
// each with its own config (a global setup starts the brokers it needs, as on Node); create's unit
// tests and every broker package's in-process suites, taken from the Node lines' config (so a new
// broker's come along); and the live round trip of every broker (test/roundTrip.test.ts, through the
// broker's own client, on the real server its package's global setup starts). Each round trip first
// checks it runs on the runtime the line names (RUSTSTREAM_RUNTIME), so the line cannot pass on
// Node. Left out: the interop suites with RustStream's Rust services (the Rust side's wire
// agreement, which the Node line checks), and the files named below with why (tooling/setup/README.md,
// "Bun and Deno").
// Every project is in group 1 (`sequence.groupOrder`), as the package configs it extends: none
// restarts a broker here (vitest.config.ts says why none is left at 0).
const onBun = process.env.RUSTSTREAM_RUNTIME === "bun";
const source = { conditions: ["@ruststream/source"] };
/** Files no runtime line runs: the interop suites with RustStream's Rust services. */
const interop = ["test/interop*.test.ts"];

/**
 * Vitest hands an external module's `default` in place of its namespace when that default has an
 * `__esModule` key, and on Bun `"__esModule" in namespace` is true of every ES module namespace. So
 * zod, whose default export is its namespace `z`, came without `z` (`import { z } from "zod"` was
 * undefined). Bun's own import, without vitest's interop, is what a service on Bun gets anyway.
 */
function onRuntime(project: TestProjectInlineConfiguration): TestProjectInlineConfiguration {
  return {
    ...project,
    test: { ...project.test, deps: { ...project.test?.deps, interopDefault: !onBun } },
  };
}

/** A package's own vitest config as a project here, with `exclude` added. */
function ownConfig(pkg: string, exclude: string[] = []): TestProjectInlineConfiguration {
  return {
    root: `packages/${pkg}`,
    extends: `./packages/${pkg}/vitest.config.ts`,
    test: { exclude },
  };
}

function roundTrip(pkg: string, setup: { global: boolean; files?: string[] }) {
  return {
    root: `packages/${pkg}`,
    resolve: source,
    ssr: { resolve: source },
    test: {
      name: `${pkg} (round trip)`,
      sequence: { groupOrder: 1 },
      include: ["test/roundTrip.test.ts"],
      globalSetup: setup.global ? ["./test/globalSetup.ts"] : [],
      setupFiles: setup.files ?? [],
      testTimeout: 120_000,
      hookTimeout: 120_000,
    },
  };
}

/**
 * The Node lines' projects of the packages whose names end with one of `kinds`: every broker's
 * in-process suite, and create's unit tests (its generated projects' test, a tsc and a vitest run
 * per broker, stays on the whole suite's line).
 */
function nodeLinesSuites(kinds: string[]): TestProjectInlineConfiguration[] {
  return (nodeLines.test?.projects ?? []).filter(
    (p): p is TestProjectInlineConfiguration =>
      typeof p === "object" &&
      "root" in p &&
      String(p.root).startsWith("packages/") &&
      kinds.some((kind) => (p.test?.name as string | undefined)?.endsWith(kind) === true),
  );
}

export default defineConfig({
  test: {
    projects: (
      [
        {
          root: "packages/core",
          test: {
            name: "core",
            sequence: { groupOrder: 1 },
            include: ["src/**/*.test.ts", "test/**/*.test.ts"],
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
            sequence: { groupOrder: 1 },
            include: ["src/**/*.test.ts", "test/**/*.test.ts"],
            // On Bun two planted faults go uncaught (packages/testing/README.md, "Runtimes"): a
            // constructor's timer, as Bun's process.getActiveResourcesInfo() answers [] with a timer
            // pending, and a request that gives up before its timeout.
            exclude: onBun ? ["test/faultyBroker.test.ts"] : [],
            testTimeout: 60_000,
          },
        },
        ownConfig("health"),
        // Not resume.test.ts: it decodes a file cut at every one of its offsets, minutes of the same
        // arithmetic on any runtime (the Node lines run it), over the lines' time.
        ownConfig("file", [...interop, "test/resume.test.ts"]),
        // Not brokers.test.ts: fifteen documents, one per broker's bindings, through the same
        // document code and the same parser as the files that run (94 s on Bun here, the most of any).
        ownConfig("asyncapi", ["test/brokers.test.ts"]),
        ownConfig("otel", ["test/interop.rust.test.ts"]),
        ownConfig("metrics"),
        ownConfig("nestjs"),
        // Its tests, as the file broker's, start a second process with the runtime's own command
        // (on Deno `deno run -A --sloppy-imports --conditions=@ruststream/source`: tooling/testkit's
        // scriptCommand).
        ownConfig("cli"),
        ...nodeLinesSuites(["(in-process)", "(unit)"]),
        roundTrip("redis", { global: true }),
        roundTrip("kafka", { global: true, files: ["./test/setup.ts"] }),
        roundTrip("pulsar", { global: true }),
        roundTrip("nats", { global: true }),
        roundTrip("rabbitmq", { global: true }),
        roundTrip("postgres", { global: true }),
      ] as TestProjectInlineConfiguration[]
    ).map(onRuntime),
  },
});
