// `@ruststream/redis` as it was at a git ref, beside this tree's, for rows named `app@<ref>`: how a
// change to the package is measured before/after in one interleaved run. The package's source at
// that commit is exported into .cache/bench-redis/<commit>/ (outside the source tree, kept for
// later runs) and loaded from its TypeScript, as this tree's is, with this tree's node_modules
// (the same @ruststream/core and ioredis): only the package's own code differs between the rows.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { RedisModule } from "./rows.js";

const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();

/** The full commit a ref names, and the package as it was there. */
export async function redisAt(ref: string): Promise<{ commit: string; redis: RedisModule }> {
  const top = git("rev-parse", "--show-toplevel");
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const dir = join(top, ".cache", "bench-redis", commit);
  const pkg = join(dir, "packages", "redis");
  if (!existsSync(join(pkg, "src", "index.ts"))) {
    mkdirSync(dir, { recursive: true });
    // git archive | tar: the tree at that commit, without touching the work tree.
    execFileSync("sh", ["-c", `git archive ${commit} packages/redis/src | tar -x -C '${dir}'`], {
      cwd: top,
    });
  }
  if (!existsSync(join(pkg, "node_modules"))) {
    symlinkSync(join(top, "packages", "redis", "node_modules"), join(pkg, "node_modules"));
  }
  const redis = (await import(pathToFileURL(join(pkg, "src", "index.ts")).href)) as RedisModule;
  return { commit, redis };
}
