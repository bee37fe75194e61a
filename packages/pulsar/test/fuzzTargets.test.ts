// The Pulsar fuzz targets (test/fuzz/, in the shape of the project's fuzz suite) on their corpus
// and a systematic sweep of each seed: every decoder throws only DecodeError, and its own checks
// hold (whole and in pieces agree, nothing a batch declares is lost, no output past the declared
// size). The suite's seeded mutations and its time and memory bounds run these targets once they
// are wired into it.
import { describe, expect, it } from "vitest";
import { pulsarTargets } from "./fuzz/index.js";
import type { FuzzInput, FuzzResult, PulsarFuzzTarget } from "./fuzz/pulsarTarget.js";

/** At most this many places per seed for each kind of damage. */
const PLACES = 48;

/** The seed, cut short at evenly spread places, and bytes and 32-bit fields set to edge values. */
function* sweep(seed: Uint8Array): Generator<FuzzInput> {
  yield { seed, bytes: seed, firstChange: seed.length };
  const step = Math.max(1, Math.floor(seed.length / PLACES));
  for (let at = 0; at < seed.length; at += step) {
    yield { seed, bytes: seed.subarray(0, at), firstChange: at };
    for (const value of [0x00, 0x80, 0xff]) {
      const bytes = Uint8Array.from(seed);
      bytes[at] = bytes[at] === value ? value ^ 1 : value;
      yield { seed, bytes, firstChange: at };
    }
    for (const value of [0xffff_ffff, 0x7fff_ffff, 0x8000_0000, 0]) {
      const bytes = Buffer.from(Uint8Array.from(seed));
      if (at + 4 <= bytes.length) {
        bytes.writeUInt32BE(value, at);
        yield { seed, bytes, firstChange: at };
      }
    }
  }
}

function run(target: PulsarFuzzTarget, input: FuzzInput): string | undefined {
  let result: FuzzResult;
  try {
    result = { threw: false, value: target.decode(input) };
  } catch (error) {
    if (!target.ownError(error)) return `crash: ${String(error)}`;
    result = { threw: true, value: error };
  }
  return target.check(input, result);
}

describe.each(pulsarTargets.map((t) => [t.name, t] as const))("%s", (_, target) => {
  it("decodes its corpus and every seed's sweep, throwing only DecodeError, its checks holding", () => {
    const findings: string[] = [];
    let inputs = 0;
    const cases = [
      ...target.corpus().map(({ name, input }) => ({ name, input })),
      ...target
        .seeds()
        .flatMap((seed, i) => [...sweep(seed)].map((input) => ({ name: `seed ${i}`, input }))),
    ];
    for (const { name, input } of cases) {
      inputs++;
      const finding = run(target, input);
      if (finding !== undefined)
        findings.push(`${name}: ${finding}; ${target.describe(input).slice(0, 300)}`);
    }
    expect(findings).toEqual([]);
    expect(inputs).toBeGreaterThan(target.corpus().length);
  });
});
