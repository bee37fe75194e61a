// The two rows of a bench whose raw loop and full app share one setting (RabbitMQ's prefetch,
// PostgreSQL's rows a claim): `raw` and `app` at the bench's value, `raw:<n>` and `app:<n>` at
// another, so a run can look for the fastest without a code change.
import type { Drained } from "../kafka/tally.js";

export interface SettingRow<Trial> {
  /** The printed name at setting `n`. */
  readonly name: (n: number) => string;
  readonly run: (trial: Trial, n: number) => Promise<Drained>;
}

export interface SettingRows {
  name(key: string): string;
  /** The row module's entry (protocol.ts). */
  runRow(key: string, trial: unknown): Promise<Drained>;
}

export function settingRows<Trial>(
  setting: string,
  fallback: number,
  rows: { readonly raw: SettingRow<Trial>; readonly app: SettingRow<Trial> },
): SettingRows {
  const parse = (key: string): [SettingRow<Trial>, number] => {
    const [base, n] = key.split(":");
    const row = base === "raw" ? rows.raw : base === "app" ? rows.app : undefined;
    const value = n === undefined ? fallback : Number(n);
    if (row === undefined || !Number.isInteger(value) || value < 1) {
      throw new Error(`unknown row "${key}": raw, app, raw:<${setting}> or app:<${setting}>`);
    }
    return [row, value];
  };
  return {
    name: (key) => {
      const [row, n] = parse(key);
      return row.name(n);
    },
    runRow: (key, trial) => {
      const [row, n] = parse(key);
      return row.run(trial as Trial, n);
    },
  };
}
