import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * Stands in for `npm install` in a generated project: node_modules links every dependency to the
 * workspace's copy, the @ruststream packages to their folders (run from source, through the
 * "@ruststream/source" condition), the rest to what the broker's example installed. The registry
 * install itself is the release rehearsal's to check.
 */
export function linkWorkspace(project: string, broker: string): void {
  const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) {
    const link = join(project, "node_modules", dep);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(workspaceCopy(dep, broker), link, "dir");
  }
}

function workspaceCopy(dep: string, broker: string): string {
  if (dep.startsWith("@ruststream/"))
    return join(repo, "packages", dep.slice("@ruststream/".length));
  const candidates = [
    join(repo, "examples", broker, "node_modules", dep),
    join(repo, "node_modules", dep),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) {
    throw new Error(
      `${dep} is not installed in the workspace (looked in ${candidates.join(", ")}): run pnpm install`,
    );
  }
  return realpathSync(found);
}
