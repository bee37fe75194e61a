import { defineProject } from "vitest/config";

// The Redis package against a Redis Cluster (six nodes) and a Sentinel set, both from
// tooling/brokers and started by this project's global setup (stopped at its end if it started
// them). Its files run one at a time: some kill a master or move a slot, and the others would
// measure that instead of what they test. Group 2 (the root vitest.config.ts): after the projects
// sharing the brokers, before the restarts; its one worker keeps it out of group 1.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "redis-cluster",
    sequence: { groupOrder: 2 },
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["./test/cluster/globalSetup.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
