import { defineProject } from "vitest/config";

// The docs' tests build the site and compile every snippet against the packages' source (the
// "@ruststream/source" condition), so a snippet never passes against a stale build.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "docs",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});
