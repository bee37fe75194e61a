import { defineProject } from "vitest/config";

// Workspace packages resolve to their source (the "@ruststream/source" export condition), so the
// example's tests never run against a stale build. A file needs no server: both tests run anywhere.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: { name: "example-file", sequence: { groupOrder: 1 }, include: ["test/**/*.test.ts"] },
});
