import { describe, it } from "vitest";

/** One named check of a suite. */
export interface Scenario<TContext> {
  readonly name: string;
  run(context: TContext): Promise<void>;
}

/** The outcome of one scenario run outside vitest's registration. */
export interface ScenarioResult {
  readonly name: string;
  readonly error: unknown;
}

/** Registers each scenario as a vitest test under one `describe`. */
export function registerSuite<TContext>(
  title: string,
  scenarios: readonly Scenario<TContext>[],
  context: TContext,
  timeoutMs: number,
): void {
  describe(`conformance: ${title}`, () => {
    for (const scenario of scenarios) {
      it(scenario.name, () => scenario.run(context), timeoutMs);
    }
  });
}

/** Runs every scenario and reports each outcome: how this package proves a suite can fail. */
export async function runScenarios<TContext>(
  scenarios: readonly Scenario<TContext>[],
  context: TContext,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    try {
      await scenario.run(context);
      results.push({ name: scenario.name, error: undefined });
    } catch (error) {
      results.push({ name: scenario.name, error });
    }
  }
  return results;
}
