// A workspace package as it was at a git ref, beside this tree's, for rows measured before and
// after a change in one interleaved run (`app@<ref>` in the Redis drain, `OTEL_AT` in bench:ops).
// The package's source at that commit is exported into .cache/bench-<package>/<commit>/ (outside
// the source tree, kept for later runs) and loaded from its TypeScript, as this tree's is, with
// this tree's node_modules (the same @ruststream/core and clients): only the package's own code
// differs between the rows.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).trim();

/** The full commit a ref names, and `packages/<name>` as it was there. */
export async function packageAt<Module>(
  name: string,
  ref: string,
): Promise<{ commit: string; module: Module }> {
  const top = git("rev-parse", "--show-toplevel");
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const dir = join(top, ".cache", `bench-${name}`, commit);
  const pkg = join(dir, "packages", name);
  if (!existsSync(join(pkg, "src", "index.ts"))) {
    mkdirSync(dir, { recursive: true });
    // git archive | tar: the tree at that commit, without touching the work tree.
    execFileSync("sh", ["-c", `git archive ${commit} packages/${name}/src | tar -x -C '${dir}'`], {
      cwd: top,
    });
  }
  if (!existsSync(join(pkg, "node_modules"))) {
    symlinkSync(join(top, "packages", name, "node_modules"), join(pkg, "node_modules"));
  }
  const module = (await import(pathToFileURL(join(pkg, "src", "index.ts")).href)) as Module;
  return { commit, module };
}
