import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so the
// example's tests never run against a stale build.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: { name: "example-orders", sequence: { groupOrder: 1 }, include: ["test/**/*.test.ts"] },
});
