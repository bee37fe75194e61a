import { defineConfig } from "vitest/config";

// What the test command runs on Bun and on Deno (tooling/setup/runtimes.mjs), after the Node lines:
// core's suite (the runtime every service runs on) and the live round trip of every broker
// (test/roundTrip.test.ts, through the broker's own client, on the real server its package's global
// setup starts). Each round trip first checks it runs on the runtime the line names
// (RUSTSTREAM_RUNTIME), so the line cannot pass on Node. Not the whole of the Node lines' set: under
// vitest on Bun, a service started through tsx's loader hung, and so did the file broker's suite
// (tooling/setup/README.md, "Bun and Deno").
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
          exclude: process.env.RUSTSTREAM_RUNTIME === "bun" ? ["test/runtime/schema.test.ts"] : [],
          // The seeded-sequence tests are CPU-bound: slower runtimes on shared cores need longer.
          testTimeout: 60_000,
        },
      },
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
