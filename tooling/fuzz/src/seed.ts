/** The default seed of every run; FUZZ_SEED (or `--seed`) picks another. */
export const DEFAULT_SEED = 0x5eed_f022;

export function fuzzSeed(text = process.env.FUZZ_SEED): number {
  if (text === undefined || text === "") return DEFAULT_SEED;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED "${text}" is not an integer`);
  return seed | 0;
}
