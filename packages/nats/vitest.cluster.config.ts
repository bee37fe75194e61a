import { defineProject } from "vitest/config";

// The NATS package against a three-node JetStream cluster from tooling/brokers, started by this
// project's global setup (stopped at its end if it started it). Its files run one at a time: they
// kill nodes. Group 2 (the root vitest.config.ts): after the projects sharing the brokers, before
// the restarts; its one worker keeps it out of group 1.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "nats-cluster",
    sequence: { groupOrder: 2 },
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["./test/cluster/globalSetup.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
