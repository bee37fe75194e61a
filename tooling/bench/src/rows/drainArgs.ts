// The command line every drain bench of drainRounds.ts takes, `[count] [rounds] [rows] [file]`, and
// what it makes of it: the results' file (`<bench>.json` for a run of 100,000 orders or more and 5
// rounds or more, else `<bench>-quick.json`, unless named) and the command as the results record it.

export interface DrainArgs {
  readonly count: number;
  readonly rounds: number;
  /** The rows' keys, in the first round's order. */
  readonly chosen: readonly string[];
  readonly file: string;
  readonly command: string;
}

export function drainArgs(bench: string, defaultRows: readonly string[]): DrainArgs {
  const [countArg, roundsArg, rowsArg, fileArg] = process.argv.slice(2);
  const count = Number(countArg ?? 100_000);
  const rounds = Number(roundsArg ?? 5);
  const chosen = rowsArg === undefined ? defaultRows : rowsArg.split(",");
  const full = count >= 100_000 && rounds >= 5;
  const named = [rowsArg === undefined ? [] : [chosen.join(",")], fileArg ?? []].flat();
  return {
    count,
    rounds,
    chosen,
    file: fileArg ?? `${bench}${full ? "" : "-quick"}.json`,
    command: [
      `pnpm --filter @ruststream/tooling-bench bench:${bench}`,
      count,
      rounds,
      ...named,
    ].join(" "),
  };
}
