import { defineProject } from "vitest/config";

// The tests that restart a broker every project's live tests share (the Pulsar standalone, whose
// package tests hold no lock on it): a group of their own, started once every other project's
// group has ended, so no other test loses its connection to the restart mid-way.
export default defineProject({
  test: {
    name: "brokers (restarts)",
    include: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    sequence: { groupOrder: 3 },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
