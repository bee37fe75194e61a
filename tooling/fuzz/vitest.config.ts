import { defineProject } from "vitest/config";

// The fuzz suite's short budget: every target's corpus and a few hundred seeded inputs each, in
// `npm test`. No broker: the decoders run on bytes. `pnpm fuzz --long` is the long run.
export default defineProject({
  resolve: { conditions: ["@ruststream/source"] },
  ssr: { resolve: { conditions: ["@ruststream/source"] } },
  test: {
    name: "fuzz",
    sequence: { groupOrder: 1 },
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
