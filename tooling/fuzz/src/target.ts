import type { Arbitrary } from "fast-check";

/**
 * How one input ended: the decoder gave a value (`decoded`), refused with its package's own error
 * (`typed-error`), or refused because the input is past a limit it was configured with (`limit`).
 * Anything else is a finding: an error not the package's own, a property broken, a time or memory
 * bound passed.
 */
export type OutcomeClass = "decoded" | "typed-error" | "limit";

/** One decoder under fuzz: one file under `src/targets/` each, listed in `src/targets/index.ts`. */
export interface FuzzTarget<I = unknown> {
  /** Stable and short (`file-frames`): the report's row, `--target`'s value. */
  readonly name: string;
  /** What is decoded, for the report (`decodeFile and StreamDecoder in pieces`). */
  readonly decoder: string;
  /** Inputs: valid seeds with mutations. */
  readonly inputs: Arbitrary<I>;
  /**
   * Hostile inputs known by name, run before the generated ones on every run: each a case that
   * once stopped, crashed or stalled a decoder. Built when a run asks for them (some are
   * megabytes).
   */
  corpus(): readonly { readonly name: string; readonly input: I }[];
  /** The input's size in bytes, which the time and memory bounds scale with. */
  size(input: I): number;
  /**
   * Runs the decoder on `input`, answering what it returned; what it throws is classified by
   * `ownError` and `byLimit`.
   */
  decode(input: I): unknown;
  /** Whether `error` is one the decoder's package raises on purpose (all it may throw). */
  ownError(error: unknown): boolean;
  /** Whether an own error, or a returned value, is a refusal by a configured limit. */
  byLimit(result: { readonly threw: boolean; readonly value: unknown }): boolean;
  /**
   * A value `decode` returned that stands for a typed refusal rather than a decoded value (a
   * file decode's damaged outcome); default none.
   */
  refused?(value: unknown): boolean;
  /**
   * The target's own properties (whole and in pieces agree, nothing complete is lost): a
   * description of what broke, or undefined. Runs on every input after `decode`.
   */
  check(input: I, result: { readonly threw: boolean; readonly value: unknown }): string | undefined;
  /** Bytes a decode of `input` may hold beyond the input itself: its configured limits. */
  memoryBound(input: I): number;
  /** An input as text for a finding's report (hex, or a short description). */
  describe(input: I): string;
}

/** Narrows a target of any input type to the list's element type. */
export function fuzzTarget<I>(target: FuzzTarget<I>): FuzzTarget<unknown> {
  return target as FuzzTarget<unknown>;
}
