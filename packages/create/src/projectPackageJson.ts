import { type BrokerName, engineClient, type KafkaEngine, kafkaEngines } from "./brokers.js";

/** The fields of an example's package.json that a project takes. */
export interface TemplatePackage {
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

export interface PackagePlan {
  readonly name: string;
  readonly broker: BrokerName;
  readonly engine: KafkaEngine | undefined;
  /** What every `workspace:` dependency becomes: the version this package was released at. */
  readonly version: string;
}

/**
 * The project's package.json, from its example's: the example's dependencies at their versions,
 * the workspace's own packages at the released `version`, the repository's tooling left out, and of
 * Kafka's two clients only the engine's.
 */
export function projectPackageJson(template: TemplatePackage, plan: PackagePlan): object {
  const unused = new Set(
    kafkaEngines.filter((e) => e !== (plan.engine ?? "kafkajs")).map((e) => engineClient[e]),
  );
  const keep = (deps: Readonly<Record<string, string>> = {}): Record<string, string> =>
    Object.fromEntries(
      Object.entries(deps)
        .filter(([dep]) => !dep.startsWith("@ruststream/tooling-"))
        .filter(([dep]) => plan.broker !== "kafka" || !unused.has(dep))
        .map(([dep, range]) => [dep, range.startsWith("workspace:") ? plan.version : range]),
    );
  return {
    name: plan.name,
    version: "0.1.0",
    private: true,
    description: "A RustStream service.",
    type: "module",
    engines: { node: ">=22" },
    scripts: {
      start: "tsx src/main.ts",
      test: "vitest run",
      typecheck: "tsc --noEmit",
    },
    dependencies: keep(template.dependencies),
    devDependencies: keep(template.devDependencies),
  };
}
