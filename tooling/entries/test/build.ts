// The packages as a user installs them: their dist, built by tsup. Where a package's dist is
// missing, or older than what it is built from, it is built again here, so the tests never run
// against a stale build and never skip for a missing one.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export const root = resolve(import.meta.dirname, "../../..");

/** A workspace package and the subpaths of its exports map (`"."`, `"./wire"`...). */
export interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  readonly subpaths: readonly string[];
  /** The subpaths with a `require` condition: an ES module only entry has none. */
  readonly requireSubpaths: readonly string[];
  /** The dist files its exports map names for `import` and `require`. */
  readonly outputs: readonly string[];
  /** The workspace packages it depends on in any way (dependencies, peers, dev). */
  readonly uses: readonly string[];
}

interface Conditions {
  readonly import?: { readonly default?: string };
  readonly require?: { readonly default?: string };
}

interface Manifest {
  readonly name: string;
  readonly exports: Readonly<Record<string, Conditions | string>>;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

/** Every package under packages/, in an order where each comes after the packages it uses. */
export function workspacePackages(): WorkspacePackage[] {
  const found: WorkspacePackage[] = [];
  for (const entry of readdirSync(join(root, "packages"), { withFileTypes: true })) {
    const dir = join(root, "packages", entry.name);
    if (!entry.isDirectory() || !existsSync(join(dir, "package.json"))) continue;
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
    const subpaths = Object.keys(manifest.exports).filter((s) => s !== "./package.json");
    const outputs = subpaths.flatMap((s) => {
      const target = manifest.exports[s];
      if (typeof target === "string") return [target];
      return [target?.import?.default, target?.require?.default].filter(
        (p): p is string => p !== undefined,
      );
    });
    const requireSubpaths = subpaths.filter((s) => {
      const target = manifest.exports[s];
      return typeof target === "string" || target?.require !== undefined;
    });
    const uses = Object.keys({
      ...manifest.dependencies,
      ...manifest.peerDependencies,
      ...manifest.devDependencies,
    }).filter((d) => d.startsWith("@ruststream/") && !d.startsWith("@ruststream/tooling-"));
    found.push({ name: manifest.name, dir, subpaths, requireSubpaths, outputs, uses });
  }
  const ordered: WorkspacePackage[] = [];
  const place = (pkg: WorkspacePackage, path: readonly string[]): void => {
    if (ordered.includes(pkg)) return;
    if (path.includes(pkg.name)) throw new Error(`a cycle among packages: ${path.join(" -> ")}`);
    for (const used of pkg.uses) {
      const dependency = found.find((p) => p.name === used);
      if (dependency !== undefined) place(dependency, [...path, pkg.name]);
    }
    ordered.push(pkg);
  };
  for (const pkg of found) place(pkg, []);
  return ordered;
}

function newestUnder(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestUnder(join(path, entry)));
  return newest;
}

/** Why `pkg` needs building, or `undefined` when its dist is newer than all it is built from. */
export function staleReason(pkg: WorkspacePackage): string | undefined {
  const missing = pkg.outputs.filter((o) => !existsSync(join(pkg.dir, o)));
  if (missing.length > 0) return `${missing.join(", ")} missing`;
  const built = Math.min(...pkg.outputs.map((o) => statSync(join(pkg.dir, o)).mtimeMs));
  const inputs = ["src", "package.json", "tsup.config.ts"].map((p) => join(pkg.dir, p));
  const changed = Math.max(...inputs.filter((p) => existsSync(p)).map(newestUnder));
  return changed > built ? "its sources changed after the last build" : undefined;
}

/** Builds (tsup, each package's own config) every package whose dist is missing or stale. */
export function ensureBuilt(log: (line: string) => void): void {
  const tsup = join(root, "node_modules", ".bin", "tsup");
  for (const pkg of workspacePackages()) {
    const reason = staleReason(pkg);
    if (reason === undefined) continue;
    log(`[entries] building ${pkg.name}: ${reason}`);
    try {
      execFileSync(tsup, [], { cwd: pkg.dir, stdio: "pipe", timeout: 300_000 });
    } catch (error) {
      const output = error instanceof Error && "stdout" in error ? String(error.stdout) : "";
      const errors = error instanceof Error && "stderr" in error ? String(error.stderr) : "";
      throw new Error(
        `building ${pkg.name} (tsup in ${pkg.dir}) failed; run \`pnpm build\` from the repository root to see why\n${output}${errors}`,
      );
    }
  }
}
