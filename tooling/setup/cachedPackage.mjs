// @ts-check
// One way to bring a runtime from the npm registry: its package's tarball (`npm pack`, so the
// machine's npm settings and registry apply), unpacked once into a cache folder outside the clone and
// reused by every later run. Node's lines, Bun and Deno come this way (node.mjs, runtimes.mjs).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fail, say, step } from "./step.mjs";

/** The folder every cached runtime lives under: `$XDG_CACHE_HOME/ruststream` (default `~/.cache`). */
export const cacheHome = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
  "ruststream",
);

/**
 * The folder `<cacheHome>/<kind>/<version>` holding package `pkg`'s contents (the tarball's
 * `package/` folder), fetched and unpacked the first time; `binary` is the file, relative to that
 * folder, whose presence says the folder is complete.
 * @param {{ kind: string, title: string, pkg: string, version: string, binary: string }} what
 *   `title` names the runtime in the set-up's lines ("Node 24.22.3", "Bun 1.4.5")
 */
export function cachedPackage({ kind, title, pkg, version, binary }) {
  const root = join(cacheHome, kind);
  const dir = join(root, version);
  if (existsSync(join(dir, binary))) return dir;
  const spec = `${pkg}@${version}`;
  mkdirSync(root, { recursive: true });
  const scratch = mkdtempSync(join(root, `.${version}-`));
  try {
    const fix = `check that the npm registry is reachable (\`npm view ${spec} version\`), or install ${title} yourself and run the command again`;
    say(`fetching ${title} (${spec}) from the npm registry into ${root}`);
    step(`fetching ${title}`, ["npm", "pack", spec, "--silent", "--pack-destination", scratch], {
      fix,
      quiet: true,
    });
    // npm names a scoped package's tarball `<scope>-<name>-<version>.tgz`: the one file there.
    const tarball = readdirSync(scratch).find((f) => f.endsWith(".tgz"));
    if (tarball === undefined) fail(`npm pack ${spec} left no tarball`, fix);
    const unpacked = join(scratch, kind);
    mkdirSync(unpacked);
    step(
      `unpacking ${title}`,
      [
        "tar",
        "-xzf",
        join(scratch, /** @type {string} */ (tarball)),
        "--strip-components=1",
        "-C",
        unpacked,
      ],
      { fix, quiet: true },
    );
    if (!existsSync(join(unpacked, binary))) fail(`${spec} holds no ${binary}`, fix);
    // A rename, so a run stopped half way never leaves a folder that looks complete.
    renameSync(unpacked, dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return dir;
}
