import { defineProject } from "vitest/config";

// The tests that restart the one RabbitMQ node every project's live tests share: a group of their
// own, started once every other project's group has ended, so no other test loses its connection
// to the restart mid-way.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "rabbitmq (restarts)",
    include: ["test/**/*.restart.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    sequence: { groupOrder: 3 },
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
