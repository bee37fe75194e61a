// @ts-check
// What an install put in node_modules, the same way for npm's flat tree and pnpm's .pnpm store
// links: every real package folder (symlinks are pnpm's pointers, not packages), its name and
// version, and the bytes on disk (each hard-linked file once).
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * @param {string} folder the project folder
 * @returns {{ packages: Map<string, Set<string>>, bytes: number }}
 */
export function inventory(folder) {
  /** @type {Map<string, Set<string>>} */
  const packages = new Map();
  const seen = new Set();
  let bytes = 0;
  /** @param {string} dir */
  const size = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) size(path);
      else if (entry.isFile()) {
        const stat = lstatSync(path);
        if (seen.has(stat.ino)) continue;
        seen.add(stat.ino);
        bytes += stat.size;
      }
    }
  };
  /** @param {string} modules a node_modules folder */
  const walk = (modules) => {
    let entries;
    try {
      entries = readdirSync(modules, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(modules, entry.name);
      if (entry.name === ".pnpm") {
        for (const id of readdirSync(path, { withFileTypes: true }))
          if (id.isDirectory() && id.name !== "node_modules")
            walk(join(path, id.name, "node_modules"));
      } else if (entry.name.startsWith("@") && entry.isDirectory()) {
        walk(path);
      } else if (entry.isDirectory() && !entry.name.startsWith(".")) {
        addPackage(path);
        walk(join(path, "node_modules"));
      }
    }
  };
  /** @param {string} dir */
  const addPackage = (dir) => {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (typeof manifest.name !== "string") return;
      const versions = packages.get(manifest.name) ?? new Set();
      versions.add(String(manifest.version));
      packages.set(manifest.name, versions);
    } catch {
      // Not a package (a folder of a package's own, or a broken one): nothing to count.
    }
  };
  walk(join(folder, "node_modules"));
  size(join(folder, "node_modules"));
  return { packages, bytes };
}

/** A size in the unit that reads best. */
export function bytesText(/** @type {number} */ bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** How many distinct name@version an inventory holds. */
export function packageCount(/** @type {Map<string, Set<string>>} */ packages) {
  let count = 0;
  for (const versions of packages.values()) count += versions.size;
  return count;
}
