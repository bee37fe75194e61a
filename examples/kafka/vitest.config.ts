import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so the
// example's tests never run against a stale build. The live test reads KAFKA_BROKERS, which the global
// setup exports after starting Kafka; the in-process test needs no server.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "example-kafka",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    setupFiles: ["./test/setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
