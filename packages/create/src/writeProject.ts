import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { brokers, engineClient } from "./brokers.js";
import type { Choices } from "./choices.js";
import { CreateError } from "./createError.js";
import { projectPackageJson, type TemplatePackage } from "./projectPackageJson.js";

/** npm leaves every .gitignore out of a published package, so the template's is named without the dot. */
const renamed: Readonly<Record<string, string>> = { gitignore: ".gitignore" };

/**
 * Writes the project into `choices.directory` (created if missing, refused if not empty) from
 * `templates`: the broker's example (its app, main and in-process test) and the files every
 * project shares. Answers the paths written, relative to the directory.
 */
export async function writeProject(
  choices: Choices,
  version: string,
  templates: string,
): Promise<string[]> {
  await refuseNonEmpty(choices.directory);
  const files = new Map<string, string>();
  const common = join(templates, "common");
  for (const path of await filesUnder(common)) {
    const text = await readFile(join(common, path), "utf8");
    files.set(renamed[path] ?? path, path === "README.md" ? readme(text, choices) : text);
  }
  const example = join(templates, choices.broker);
  for (const path of await filesUnder(example)) {
    const text = await readFile(join(example, path), "utf8");
    if (path === "package.json") {
      const template = JSON.parse(text) as TemplatePackage;
      const pkg = projectPackageJson(template, { ...choices, version });
      files.set(path, `${JSON.stringify(pkg, null, 2)}\n`);
    } else {
      files.set(path, path === "src/app.ts" ? withEngine(text, choices) : text);
    }
  }
  for (const [path, text] of files) {
    const target = join(choices.directory, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text);
  }
  return [...files.keys()].sort();
}

async function refuseNonEmpty(directory: string): Promise<void> {
  const entries = await readdir(directory).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    if (error.code === "ENOTDIR") {
      throw new CreateError(`${directory} is a file: give a directory that does not exist yet`);
    }
    throw error;
  });
  if (entries.length > 0) {
    throw new CreateError(
      `${directory} is not empty (${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", ..." : ""}): give a new directory, or empty this one first`,
    );
  }
}

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
      throw new CreateError(
        `no templates at ${root}: this @ruststream/create was not built (in the repository, run \`pnpm --filter @ruststream/create build\`)`,
      );
    },
  );
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split("\\").join("/"));
}

/** The Kafka example runs on kafkajs; the other engine is the same line with its name. */
function withEngine(app: string, choices: Choices): string {
  if (choices.engine === undefined || choices.engine === "kafkajs") return app;
  const kafkajs = 'engine: "kafkajs"';
  if (!app.includes(kafkajs)) throw new Error(`the Kafka template's app.ts has no ${kafkajs}`);
  return app.replace(kafkajs, `engine: "${choices.engine}"`);
}

function readme(template: string, choices: Choices): string {
  const broker = brokers[choices.broker];
  const engine =
    choices.engine === undefined
      ? ""
      : `\nThe broker runs on the ${choices.engine} engine (\`${engineClient[choices.engine]}\`); \`engine\` in \`src/app.ts\` picks it.\n`;
  const values: Readonly<Record<string, string>> = {
    name: choices.name,
    title: broker.title,
    runs: broker.runs,
    brokerPackage: broker.package,
    engine,
  };
  return template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => values[key] ?? whole);
}
