import { globSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { TestProjectInlineConfiguration, UserWorkspaceConfig } from "vitest/config";

// Every project names its group (`sequence.groupOrder`): a project left at 0 on one worker is run by
// vitest after every numbered group, so under vitest 5 (one worker per project on a 2-core machine)
// the broker restarts would run first (vitest.config.ts, tooling/setup/README.md). These read the
// configs the test command runs, as vitest loads them.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const fix =
  "set test.sequence.groupOrder: 1 beside the projects sharing the brokers, 2 for a project with " +
  "fileParallelism: false (a cluster's), 3 for one that restarts a shared broker (vitest.config.ts)";

type Project = UserWorkspaceConfig | TestProjectInlineConfiguration;
/** A project as the test command runs it: where it is written, and its config. */
interface Found {
  where: string;
  project: Project;
}

async function load(file: string): Promise<Project> {
  return (await import(join(root, file))).default as Project;
}

/** The projects of a root config: its files' configs (globs expanded) and its inline projects. */
async function projectsOf(configFile: string): Promise<Found[]> {
  const config = (await load(configFile)) as { test?: { projects?: unknown[] } };
  const found: Found[] = [];
  for (const entry of config.test?.projects ?? []) {
    if (typeof entry === "string") {
      for (const file of globSync(entry, { cwd: root }).sort()) {
        found.push({ where: file, project: await load(file) });
      }
    } else {
      const inline = entry as TestProjectInlineConfiguration;
      // A project that extends a file takes that file's group unless it sets its own.
      const extended =
        typeof inline.extends === "string" ? await load(inline.extends) : ({} as Project);
      found.push({
        where: `${configFile}, project "${inline.test?.name ?? extended.test?.name}"${
          typeof inline.extends === "string" ? ` (extends ${inline.extends})` : ""
        }`,
        project: {
          ...inline,
          test: {
            ...extended.test,
            ...inline.test,
            sequence: inline.test?.sequence ?? extended.test?.sequence,
          },
        },
      });
    }
  }
  return found;
}

/** What is wrong with a project's group, or undefined when it names one. */
function missingGroup({ where, project }: Found): string | undefined {
  const order = project.test?.sequence?.groupOrder;
  if (Number.isInteger(order) && (order as number) > 0) return undefined;
  return `${where}: sequence.groupOrder is ${order ?? "not set"}; ${fix}`;
}

/** The group a project of the whole suite belongs in, by what it does. */
function groupFor({ where, project }: Found): number {
  if (where.endsWith("vitest.restart.config.ts")) return 3;
  return project.test?.fileParallelism === false ? 2 : 1;
}

describe("every project names its vitest group", () => {
  it("the check names the file and the fix for a project left without a group or at 0", () => {
    expect(missingGroup({ where: "packages/x/vitest.config.ts", project: { test: {} } })).toBe(
      `packages/x/vitest.config.ts: sequence.groupOrder is not set; ${fix}`,
    );
    expect(
      missingGroup({ where: "y", project: { test: { sequence: { groupOrder: 0 } } } }),
    ).toMatch(/^y: sequence\.groupOrder is 0; set test\.sequence\.groupOrder: 1 /);
    expect(missingGroup({ where: "z", project: { test: { sequence: { groupOrder: 2 } } } })).toBe(
      undefined,
    );
  });

  for (const configFile of [
    "vitest.config.ts",
    "vitest.nodeLines.config.ts",
    "vitest.runtimeLines.config.ts",
  ]) {
    it(`${configFile}: no project is left at order 0`, async () => {
      const projects = await projectsOf(configFile);
      expect(projects.length).toBeGreaterThan(10);
      expect(projects.map(missingGroup).filter((m) => m !== undefined)).toEqual([]);
    });
  }

  it("the whole suite: brokers' projects in 1, the three clusters in 2, the four restarts in 3", async () => {
    const projects = await projectsOf("vitest.config.ts");
    const wrong = projects
      .filter((p) => p.project.test?.sequence?.groupOrder !== groupFor(p))
      .map(
        (p) =>
          `${p.where}: sequence.groupOrder is ${p.project.test?.sequence?.groupOrder}, ` +
          `belongs in ${groupFor(p)}; ${fix}`,
      );
    expect(wrong).toEqual([]);
    const inGroup = (n: number) =>
      projects.filter((p) => groupFor(p) === n).map((p) => p.project.test?.name);
    expect(inGroup(2).sort()).toEqual(["nats-cluster", "rabbitmq-cluster", "redis-cluster"]);
    expect(inGroup(3).sort()).toEqual([
      "brokers (restarts)",
      "metrics (restarts)",
      "postgres (restarts)",
      "rabbitmq (restarts)",
    ]);
  });
});
