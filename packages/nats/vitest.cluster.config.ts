import { defineProject } from "vitest/config";

// The NATS package against a three-node JetStream cluster from tooling/brokers, started by this
// project's global setup (stopped at its end if it started it). Its files run one at a time: they
// kill nodes.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "nats-cluster",
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["./test/cluster/globalSetup.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
