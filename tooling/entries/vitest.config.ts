import { defineProject } from "vitest/config";

// Unlike the packages' projects, nothing here resolves to source: the point is the built dist, as
// a user's require() and import load it. The global setup builds what is stale and starts Pulsar
// and Kafka; the round trips run in child processes of their own (plain node, no loader).
export default defineProject({
  test: {
    name: "entries",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 300_000,
  },
});
