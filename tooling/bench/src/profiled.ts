// What a bench hands profileRow.ts: one of its rows, opened to run alone again and again under
// `node --cpu-prof`, so the profile holds that row and none of the others the bench's main mixes in.

/** One run: its time and, where the bench counts it, the process's CPU time over the same span. */
export interface ProfiledRun {
  readonly ms: number;
  readonly cpuMs?: number;
}

/** A row, opened: its name as printed, one run (round `i`: its own topic, key or stream), its close. */
export interface ProfiledRow {
  readonly label: string;
  run(i: number): Promise<ProfiledRun>;
  close(): void | Promise<void>;
}

/** One bench's rows for profileRow.ts, and the defaults of its command line. */
export interface ProfiledBench {
  /** The arguments that name a row, in order, with their defaults. */
  readonly row: readonly { readonly name: string; readonly default: string }[];
  readonly count: number;
  readonly times: number;
  /** The argument after `times`, when the bench takes one. */
  readonly extra?: { readonly name: string; readonly default: string };
  /** Opens the row `row` names (failing with the names there are) for runs of `count` messages. */
  open(row: readonly string[], count: number, extra: string): Promise<ProfiledRow>;
}
