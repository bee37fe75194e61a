// A row held against another (OpsRow.against): its CPU per message over the other's, round by round
// (the two ran in the same round, seconds apart), so 1.10 reads "costs 10% more than that row".
import { byRound, median } from "../stats.js";
import type { OpsRow } from "./row.js";

export interface CostRatio {
  readonly row: string;
  readonly against: string;
  readonly path: "ack" | "reply";
  /** Each round's CPU per message of `row` over `against`'s (their rates the other way round). */
  readonly byRound: readonly number[];
  readonly median: number;
  readonly lowest: number;
  readonly highest: number;
}

/** Every `against` pair among `rows`, on both paths; a pair whose other row did not run is left out. */
export function costRatios(
  rows: readonly OpsRow[],
  rates: ReadonlyMap<
    string,
    { readonly ack: readonly number[]; readonly reply: readonly number[] }
  >,
): CostRatio[] {
  const ratios: CostRatio[] = [];
  for (const row of rows) {
    for (const against of row.against ?? []) {
      const other = rates.get(against);
      if (other === undefined) continue;
      for (const path of ["ack", "reply"] as const) {
        // CPU per message is 1 / rate: the other row's rate over this one's.
        const rounds = byRound(other[path], rates.get(row.name)![path]);
        ratios.push({
          row: row.name,
          against,
          path,
          byRound: rounds,
          median: median(rounds),
          lowest: Math.min(...rounds),
          highest: Math.max(...rounds),
        });
      }
    }
  }
  return ratios;
}

export function costRatioLine(r: CostRatio): string {
  const f = (n: number) => n.toFixed(3);
  return `${r.row}, ${r.path}: ${f(r.median)}x the CPU per message of "${r.against}" (rounds paired: ${f(r.lowest)}-${f(r.highest)})`;
}
