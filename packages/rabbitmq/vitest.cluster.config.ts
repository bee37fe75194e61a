import { defineProject } from "vitest/config";

// The RabbitMQ package against a three-node cluster from tooling/brokers, started by this project's
// global setup (stopped at its end if it started it). Its files run one at a time: they kill nodes.
// Three Erlang nodes booting on two busy cores take up to a few minutes: the hook's budget. Group 2
// (the root vitest.config.ts): after the projects sharing the brokers, before the restarts; its one
// worker keeps it out of group 1.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "rabbitmq-cluster",
    sequence: { groupOrder: 2 },
    include: ["test/cluster/**/*.test.ts"],
    globalSetup: ["./test/cluster/globalSetup.ts"],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
