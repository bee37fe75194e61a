import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One public entry of a published package: the specifier a service imports, and its source file. */
export interface ApiEntry {
  readonly specifier: string;
  readonly file: string;
}

interface PackageJson {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Record<string, string | Record<string, unknown>>;
}

/**
 * Every public entry of every published package, read from its `exports` map: the
 * `@ruststream/source` condition names the source file of each entry, so an entry added to a
 * package reaches the reference without this list being edited.
 */
export function apiEntries(root: string): ApiEntry[] {
  const packages = join(root, "packages");
  const entries: ApiEntry[] = [];
  for (const dir of readdirSync(packages).sort()) {
    const pkg = JSON.parse(
      readFileSync(join(packages, dir, "package.json"), "utf8"),
    ) as PackageJson;
    if (pkg.private) continue;
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      if (typeof target === "string") continue; // ./package.json
      const source = target["@ruststream/source"];
      if (typeof source !== "string") {
        throw new Error(
          `${pkg.name}: its export "${subpath}" has no "@ruststream/source" condition, so the API reference cannot find its source: add one, as the package's other entries have`,
        );
      }
      entries.push({
        specifier: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
        file: join(packages, dir, source),
      });
    }
  }
  return entries;
}
