import { defineProject } from "vitest/config";

// The test that restarts the PostgreSQL cluster every project's live tests share: a project of its
// own, in the group that starts once every other project's group has ended (as tooling/brokers'
// restart tests), holding the cluster alone while it restarts it.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "postgres (restarts)",
    include: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    sequence: { groupOrder: 1 },
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
