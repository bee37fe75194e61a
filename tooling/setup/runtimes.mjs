// @ts-check
// The runtimes besides Node the tests run on: Bun and Deno, each at a pinned version from the npm
// registry (the packages their own `bun` and `deno` packages install for this platform), cached
// beside Node's lines (cachedPackage.mjs). A line names the command that runs a script on it, with
// every process the script starts (vitest's workers, a round trip's child) on the same runtime.
import { join } from "node:path";
import { cachedPackage, cacheHome } from "./cachedPackage.mjs";
import { fail } from "./step.mjs";

/**
 * @typedef {{ name: string, version: string, title: string,
 *   ensure: () => { run: string[], env: NodeJS.ProcessEnv } }} RuntimeLine
 * `run` is the command that runs a script file on the runtime (the file's path follows it); `env`,
 * the variables it needs beside the caller's.
 */

/** Bun's npm package per platform (`bun`'s optional dependencies); it needs AVX2 on x64. */
const bunPackages = /** @type {Record<string, string>} */ ({
  "linux-x64": "@oven/bun-linux-x64",
  "linux-arm64": "@oven/bun-linux-aarch64",
  "darwin-x64": "@oven/bun-darwin-x64",
  "darwin-arm64": "@oven/bun-darwin-aarch64",
});

/** Deno's npm package per platform (`deno`'s optional dependencies). */
const denoPackages = /** @type {Record<string, string>} */ ({
  "linux-x64": "@deno/linux-x64-glibc",
  "linux-arm64": "@deno/linux-arm64-glibc",
  "darwin-x64": "@deno/darwin-x64",
  "darwin-arm64": "@deno/darwin-arm64",
});

/** The package of `packages` for this machine, or a stop naming what to do. */
function platformPackage(
  /** @type {string} */ title,
  /** @type {Record<string, string>} */ packages,
) {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = packages[platform];
  if (pkg === undefined) {
    fail(
      `${title} has no npm package for ${platform} here`,
      "skip the Bun and Deno lines with RUSTSTREAM_RUNTIME_LINES=none",
    );
  }
  return /** @type {string} */ (pkg);
}

export const bunVersion = "1.4.5";
export const denoVersion = "2.9.6";

/** @type {RuntimeLine} */
export const bunLine = {
  name: "bun",
  version: bunVersion,
  title: `Bun ${bunVersion}`,
  ensure() {
    const dir = cachedPackage({
      kind: "bun",
      title: this.title,
      pkg: platformPackage(this.title, bunPackages),
      version: bunVersion,
      binary: join("bin", "bun"),
    });
    // `--bun` runs the script on Bun even where it asks for node (a `#!/usr/bin/env node` line, a
    // child forked with process.execPath), so vitest's workers run on Bun too.
    return { run: [join(dir, "bin", "bun"), "--bun"], env: {} };
  },
};

/** @type {RuntimeLine} */
export const denoLine = {
  name: "deno",
  version: denoVersion,
  title: `Deno ${denoVersion}`,
  ensure() {
    const dir = cachedPackage({
      kind: "deno",
      title: this.title,
      pkg: platformPackage(this.title, denoPackages),
      version: denoVersion,
      binary: "deno",
    });
    return {
      // -A: the tests open sockets, files and child processes; the workspace's node_modules is used
      // as installed (Deno reads the package.json beside it).
      run: [join(dir, "deno"), "run", "-A"],
      // Deno's own cache (compiled modules) beside the binary, not in the user's ~/.cache/deno.
      env: { DENO_DIR: join(cacheHome, "deno-dir"), DENO_NO_UPDATE_CHECK: "1" },
    };
  },
};

/** The lines `npm test` runs after Node's, in order. */
export const runtimeLines = [bunLine, denoLine];
