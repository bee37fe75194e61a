import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so the
// example's test never runs against a stale build. It reads POSTGRES_URL and KAFKA_BROKERS, which
// the global setup exports after starting PostgreSQL and Kafka.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "example-outbox",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
