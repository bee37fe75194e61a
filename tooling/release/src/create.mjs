// @ts-check
// The scaffolder, once it exists: `npm init @ruststream@<version> <dir> -- --broker <b>` in an empty
// folder, then the generated project's own `npm test`, for each broker. `@ruststream/create` is
// being written on another branch; until packages/create is in the workspace this step says so and
// is skipped, and as soon as it is, the rehearsal runs it with no change here.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { run, tail } from "./run.mjs";

export const scaffoldBrokers = ["file", "redis", "kafka", "pulsar", "nats", "rabbitmq", "postgres"];

/**
 * @param {{ scratch: string, version: string | undefined, registry: string, env: NodeJS.ProcessEnv,
 *   work: string, report: import("./report.mjs").Report }} context
 */
export async function rehearseCreate({ scratch, version, registry, env, work, report }) {
  if (!existsSync(join(scratch, "packages", "create", "package.json")) || version === undefined) {
    report.skip(
      "npm init @ruststream",
      "packages/create is not in this workspace (@ruststream/create is not written yet)",
    );
    return;
  }
  const runEnv = {
    ...env,
    npm_config_registry: registry,
    // A cache of this rehearsal's own: npx keeps each package it ran by name and version
    // (`<cache>/_npx`), and every rehearsal publishes the same version, so with the user's cache
    // `npm init` would run the @ruststream/create of an earlier rehearsal, not this one's.
    npm_config_cache: join(work, "npm-cache"),
    CKJS_LINKING: env.CKJS_LINKING ?? "dynamic",
  };
  for (const broker of scaffoldBrokers) {
    const where = `npm init @ruststream (${broker})`;
    const folder = join(work, `create-${broker}`);
    mkdirSync(folder, { recursive: true });
    const init = await run(
      ["npm", "init", "--yes", `@ruststream@${version}`, "service", "--", "--broker", broker],
      { cwd: folder, env: runEnv, timeoutMs: 15 * 60_000 },
    );
    if (
      !report.check(
        where,
        "scaffolds a project",
        init.ok,
        init.ok ? "" : `${init.why}\n${tail(init.output)}`,
        `run \`npm init @ruststream service -- --broker ${broker}\` and read its error`,
      )
    )
      continue;
    const project = join(folder, "service");
    if (!existsSync(join(project, "node_modules"))) {
      const install = await run(["npm", "install", "--no-audit", "--no-fund"], {
        cwd: project,
        env: runEnv,
        timeoutMs: 15 * 60_000,
      });
      if (
        !report.check(
          where,
          "npm install in the generated project",
          install.ok,
          install.ok ? "" : `${install.why}\n${tail(install.output)}`,
          "read the install's output above",
        )
      )
        continue;
    }
    const test = await run(["npm", "test"], { cwd: project, env: runEnv, timeoutMs: 10 * 60_000 });
    report.check(
      where,
      "the generated project's npm test passes",
      test.ok,
      test.ok ? "" : `${test.why}\n${tail(test.output)}`,
      `run \`npm test\` in a project made by \`npm init @ruststream -- --broker ${broker}\``,
    );
  }
}
