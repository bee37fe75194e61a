import { describe, it } from "vitest";
import { type Capabilities, type Capability, missing } from "./capabilities.js";

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
  /** Why it did not run, when the declaration lacks what it needs. */
  readonly skipped: string | undefined;
  readonly error: unknown;
}

/**
 * Registers each scenario as a vitest test under one `describe`. A scenario whose capability the
 * broker declares absent is registered as skipped, the reason in its name, so the tally shows it.
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
      const reason = declared === undefined ? undefined : missing(scenario.needs, declared);
      if (reason === undefined) it(scenario.name, () => scenario.run(context), timeoutMs);
      else it.skip(`${scenario.name} (skipped: ${reason})`, () => {});
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
    const skipped = declared === undefined ? undefined : missing(scenario.needs, declared);
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
