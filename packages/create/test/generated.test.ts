import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { assembleTemplates } from "../scripts/templates.js";
import { main } from "../src/main.js";
import { tempDir } from "./tempDir.js";
import { linkWorkspace } from "./workspaceLinks.js";

// Each broker's new project, written as the release rehearsal writes it (`npm init @ruststream
// <dir> -- --broker <b> --yes`, here without the install), then type-checked by its own tsconfig and
// tested by its own vitest config, against the workspace's packages.
const dir = tempDir("ruststream-create-generated-");
let templates: string;
beforeAll(async () => {
  templates = await assembleTemplates(join(dir, "templates"));
});

// The projects' own workspace-free configs, plus only the condition that resolves the workspace's
// packages to their source (in a real install they come built from the registry).
const workspaceConfig = `import { mergeConfig } from "vitest/config";
import project from "./vitest.config.ts";

const source = { conditions: ["@ruststream/source"] };
export default mergeConfig(project, { resolve: source, ssr: { resolve: source } });
`;

function inProject(project: string, command: string[]): { status: number | null; output: string } {
  // Without the outer run's vitest variables, so the inner vitest runs as a project's own would.
  const env = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !key.startsWith("VITEST") && key !== "NODE_OPTIONS" && key !== "FORCE_COLOR",
      ),
    ),
    NO_COLOR: "1",
  };
  const result = spawnSync(process.execPath, command, { cwd: project, env, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const cases = [
  { broker: "file", flags: [] },
  { broker: "redis", flags: [] },
  { broker: "kafka", flags: [] },
  { broker: "kafka", flags: ["--engine", "librdkafka"] },
  { broker: "pulsar", flags: [] },
  { broker: "nats", flags: [] },
  { broker: "rabbitmq", flags: [] },
  { broker: "postgres", flags: [] },
];

describe.each(cases)("a new $broker project $flags", ({ broker, flags }) => {
  it("type-checks and passes its own in-process test", async () => {
    const name = `${broker}${flags.length > 0 ? "-librdkafka" : ""}-service`;
    const project = join(dir, name);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const code = await main([name, "--broker", broker, ...flags, "--yes", "--no-install"], {
      stdin: new PassThrough(),
      stdout,
      stderr,
      cwd: dir,
      env: {},
      templates,
    });
    expect(code, String(stderr.read() ?? "")).toBe(0);
    linkWorkspace(project, broker);

    const tsc = inProject(project, [
      "node_modules/typescript/bin/tsc",
      "-p",
      "tsconfig.json",
      "--customConditions",
      "@ruststream/source",
    ]);
    expect(tsc.status, tsc.output).toBe(0);

    writeFileSync(join(project, "workspace.vitest.config.ts"), workspaceConfig);
    const vitest = inProject(project, [
      "node_modules/vitest/vitest.mjs",
      "run",
      "--config",
      "workspace.vitest.config.ts",
    ]);
    expect(vitest.status, vitest.output).toBe(0);
    expect(vitest.output).toMatch(/Tests\s+3 passed \(3\)/);
  });
});
