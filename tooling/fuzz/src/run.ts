import { getHeapStatistics } from "node:v8";
import fc from "fast-check";
import type { FuzzTarget, OutcomeClass } from "./target.js";

/** What broke: an error not the package's own, a property, a time or a memory bound. */
export type FindingKind = "crash" | "property" | "hang" | "memory";

export interface Finding {
  readonly kind: FindingKind;
  /** `corpus:<name>` or the generated input's number in the run (seed and number reproduce it). */
  readonly input: string;
  readonly detail: string;
  readonly bytes: string;
}

/** What a target did over a run. */
export interface Tally {
  readonly target: string;
  readonly decoder: string;
  seed: number;
  inputs: number;
  bytes: number;
  outcomes: Record<OutcomeClass, number>;
  found: Record<FindingKind, number>;
  /** The first findings of each run, described. */
  findings: Finding[];
  /** The most one decode held beyond what it started with (heap and array buffers). */
  peakDecodeBytes: number;
  /** The process's largest resident set seen, sampled every {@link SAMPLE_EVERY} inputs. */
  peakRss: number;
  slowestMs: number;
  /** The input that took `slowestMs`. */
  slowestInput: string;
  /**
   * The most time per byte one decode took, on inputs of {@link PER_BYTE_FROM} or more (on a small
   * one a pause of the machine would read as a cost per byte).
   */
  worstMicrosPerByte: number;
  /**
   * Inputs over the time bound once and under it when decoded again: the machine's pauses (another
   * process on the cores, a collection), not the decoder's. A hang is over the bound both times.
   */
  retimed: number;
  elapsedMs: number;
}

export function emptyTally(target: FuzzTarget, seed: number): Tally {
  return {
    target: target.name,
    decoder: target.decoder,
    seed,
    inputs: 0,
    bytes: 0,
    outcomes: { decoded: 0, "typed-error": 0, limit: 0 },
    found: { crash: 0, property: 0, hang: 0, memory: 0 },
    findings: [],
    peakDecodeBytes: 0,
    peakRss: 0,
    slowestMs: 0,
    slowestInput: "",
    worstMicrosPerByte: 0,
    retimed: 0,
    elapsedMs: 0,
  };
}

/**
 * The time one decode may take: a quarter second, plus 2 µs a byte. Every decoder here runs well
 * under 1 µs a byte on any input; one whose cost grows with the square of something in the input
 * (the CBOR bignum, a header list scanned per header) passes this on an input of a few hundred KiB.
 */
export function timeBoundMs(size: number): number {
  return 250 + size * 0.002;
}

/** What a decode may hold beyond its own limits: the collector's timing, not the decoder. */
const MEMORY_SLACK = 16 * 1024 * 1024;
const PER_BYTE_FROM = 64 * 1024;
const SAMPLE_EVERY = 1000;
const KEPT_FINDINGS = 20;

/** The heap and what lies outside it (array buffers): V8's own counts, read without a system call. */
function heldBytes(): number {
  const heap = getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

function record(tally: Tally, finding: Finding): void {
  tally.found[finding.kind]++;
  if (tally.findings.length < KEPT_FINDINGS) tally.findings.push(finding);
}

/** How long one more decode of `input` takes, whatever it answers. */
function timed(target: FuzzTarget, input: unknown): number {
  const started = performance.now();
  try {
    target.decode(input);
  } catch {
    // Classified on the first decode.
  }
  return performance.now() - started;
}

/** Runs the target's decoder on one input and adds what happened to `tally`. */
export function runInput(target: FuzzTarget, input: unknown, name: string, tally: Tally): void {
  const size = target.size(input);
  const finding = (kind: FindingKind, detail: string) =>
    record(tally, { kind, input: name, detail, bytes: target.describe(input) });
  const before = heldBytes();
  const started = performance.now();
  let result: { threw: boolean; value: unknown };
  try {
    result = { threw: false, value: target.decode(input) };
  } catch (error) {
    result = { threw: true, value: error };
  }
  const first = performance.now() - started;
  const held = heldBytes() - before;
  tally.inputs++;
  tally.bytes += size;
  tally.peakDecodeBytes = Math.max(tally.peakDecodeBytes, held);
  // A pause of the machine is no hang: an input over the bound is timed again, and the lower counts.
  const bound = timeBoundMs(size);
  const ms = first > bound ? Math.min(first, timed(target, input)) : first;
  if (ms > bound) {
    finding(
      "hang",
      `took ${first.toFixed(0)} ms, then ${ms.toFixed(0)} ms, over ${bound.toFixed(0)} ms for ${size} bytes`,
    );
  } else if (first > bound) {
    tally.retimed++;
  }
  if (ms > tally.slowestMs) {
    tally.slowestMs = ms;
    tally.slowestInput = `${name} (${size} bytes)`;
  }
  if (size >= PER_BYTE_FROM)
    tally.worstMicrosPerByte = Math.max(tally.worstMicrosPerByte, (ms * 1000) / size);
  if (tally.inputs % SAMPLE_EVERY === 0)
    tally.peakRss = Math.max(tally.peakRss, process.memoryUsage.rss());
  if (result.threw && !target.ownError(result.value)) {
    const error = result.value as Error;
    finding("crash", `${error?.name}: ${error?.message}\n${error?.stack ?? ""}`);
    return;
  }
  if (target.byLimit(result)) tally.outcomes.limit++;
  else if (result.threw || target.refused?.(result.value)) tally.outcomes["typed-error"]++;
  else tally.outcomes.decoded++;
  let broken: string | undefined;
  try {
    broken = target.check(input, result);
  } catch (error) {
    broken = `the check itself failed: ${(error as Error).stack}`;
  }
  if (broken !== undefined) finding("property", broken);
  const memoryBound = target.memoryBound(input) + MEMORY_SLACK;
  if (held > memoryBound) {
    finding("memory", `held ${held} bytes, over ${memoryBound} for ${size} bytes`);
  }
}

/** Seed of the `batch`th batch of a run: each batch of inputs is drawn on its own seed. */
export function batchSeed(seed: number, batch: number): number {
  return (seed + Math.imul(batch, 0x9e37_79b9)) | 0;
}

export const BATCH = 1000;

/**
 * The generated inputs `from` (inclusive) to `to` (exclusive) of the run with `seed`, batch by
 * batch: the same seed draws the same inputs, so a finding's number reproduces it.
 */
export function* generated(
  target: FuzzTarget,
  seed: number,
  from: number,
  to: number,
): Generator<{ readonly index: number; readonly input: unknown }> {
  for (let batch = Math.floor(from / BATCH); batch * BATCH < to; batch++) {
    const inputs = fc.sample(target.inputs, { seed: batchSeed(seed, batch), numRuns: BATCH });
    for (let i = 0; i < BATCH; i++) {
      const index = batch * BATCH + i;
      if (index >= from && index < to) yield { index, input: inputs[i] };
    }
  }
}

/** The corpus, then `count` generated inputs, in this process. */
export function runTarget(target: FuzzTarget, seed: number, count: number): Tally {
  const tally = emptyTally(target, seed);
  const started = performance.now();
  for (const { name, input } of target.corpus()) runInput(target, input, `corpus:${name}`, tally);
  for (const { index, input } of generated(target, seed, 0, count)) {
    runInput(target, input, String(index), tally);
  }
  tally.peakRss = Math.max(tally.peakRss, process.memoryUsage.rss());
  tally.elapsedMs = performance.now() - started;
  return tally;
}
