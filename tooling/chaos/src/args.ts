// The command line: `pnpm chaos [--profile ci|long] [--seed n] [--scenario name]... [--png]`.
import { type Profile, profiles } from "./profile.js";

export interface Args {
  readonly profile: Profile;
  readonly seed: number;
  /** The scenarios asked for by name; empty: the profile's. */
  readonly scenarios: readonly string[];
  /** Draw the chart as a PNG too (headless Chromium): always for the long profile. */
  readonly png: boolean;
}

const usage =
  "usage: pnpm chaos [--profile ci|long] [--seed <whole number>] [--scenario <name>]... [--png] (the seed a report prints replays that run)";

/** Parses the arguments; without --seed one is drawn, and the report prints it for a replay. */
export function parseArgs(argv: readonly string[], drawSeed: () => number): Args {
  let profile: Profile = profiles.ci;
  let seed: number | undefined;
  const scenarios: string[] = [];
  let png = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--") continue;
    if (flag === "--png") {
      png = true;
      continue;
    }
    if (value === undefined) throw new Error(`${flag}: a value is missing. ${usage}`);
    i++;
    if (flag === "--profile") {
      if (value !== "ci" && value !== "long")
        throw new Error(`--profile ${value}: give ci or long`);
      profile = profiles[value];
    } else if (flag === "--seed") {
      const parsed = Number(value);
      if (!Number.isSafeInteger(parsed) || parsed < 0 || parsed > 0xffffffff) {
        throw new Error(`--seed ${value}: give a whole number from 0 to 4294967295`);
      }
      seed = parsed;
    } else if (flag === "--scenario") {
      scenarios.push(value);
    } else {
      throw new Error(`${flag}: unknown. ${usage}`);
    }
  }
  return { profile, seed: seed ?? drawSeed(), scenarios, png: png || profile.name === "long" };
}
