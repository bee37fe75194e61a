import { describe, expect, it } from "vitest";
import { runTarget } from "../src/run.js";
import { fuzzSeed } from "../src/seed.js";
import { targets } from "../src/targets/index.js";

// Each target's hostile corpus and a short seeded run (FUZZ_SEED picks another seed; the default
// is fixed, so a failure here fails the same way again). A finding names the input: its seed and
// number reproduce it (`pnpm fuzz --target <name> --seed <seed> --runs <number + 1>`).

const SHORT = 400;

describe.each(targets.map((t) => [t.name, t] as const))("%s", (_, target) => {
  it(`decodes its corpus and ${SHORT} seeded inputs within bounds, throwing only its package's errors`, () => {
    const tally = runTarget(target, fuzzSeed(), SHORT);
    expect(tally.findings, JSON.stringify(tally.findings, null, 2)).toEqual([]);
    expect(tally.inputs).toBe(target.corpus().length + SHORT);
  });
});
