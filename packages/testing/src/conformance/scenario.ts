import { describe, it } from "vitest";
import {
  type Absence,
  absence,
  type Capabilities,
  type Capability,
  skippedName,
} from "./capabilities.js";

/** One named check of a suite. */
export interface Scenario<TContext> {
  readonly name: string;
  /** The declared capabilities it tests; without one of them it is registered as skipped. */
  readonly needs?: readonly Capability[];
  run(context: TContext): Promise<void>;
}

/** The outcome of one scenario run outside vitest's registration. */
export interface ScenarioResult {
  readonly name: string;
  /** Why it did not run, and which kind of absence, when the declaration lacks what it needs. */
  readonly skipped: Absence | undefined;
  readonly error: unknown;
}

/**
 * Registers each scenario as a vitest test under one `describe`. A scenario whose capability the
 * broker declares absent is registered as skipped, the kind of absence and the reason in its name
 * (`skippedName`), so the tally shows it and counts the two kinds apart.
 */
export function registerSuite<TContext>(
  title: string,
  scenarios: readonly Scenario<TContext>[],
  context: TContext,
  declared: Capabilities | undefined,
  timeoutMs: number,
): void {
  describe(`conformance: ${title}`, () => {
    for (const scenario of scenarios) {
      const why = declared === undefined ? undefined : absence(scenario.needs, declared);
      if (why === undefined) it(scenario.name, () => scenario.run(context), timeoutMs);
      else it.skip(skippedName(scenario.name, why), () => {});
    }
  });
}

/** Runs every scenario the declaration allows and reports each outcome: how a suite is proven. */
export async function runScenarios<TContext>(
  scenarios: readonly Scenario<TContext>[],
  context: TContext,
  declared?: Capabilities,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    const skipped = declared === undefined ? undefined : absence(scenario.needs, declared);
    if (skipped !== undefined) {
      results.push({ name: scenario.name, skipped, error: undefined });
      continue;
    }
    try {
      await scenario.run(context);
      results.push({ name: scenario.name, skipped, error: undefined });
    } catch (error) {
      results.push({ name: scenario.name, skipped, error });
    }
  }
  return results;
}
