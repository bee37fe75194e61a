// What a benchmark run measured: the commit, and whether the source it times had uncommitted
// changes, written into each results file so a figure can be traced to the code behind it.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** The commit at HEAD, and whether any of `paths` (relative to the repository) is dirty. */
export function sourceRevision(paths: readonly string[]): { commit: string; dirty: boolean } {
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", root, ...args], { encoding: "utf8" }).trim();
  try {
    return {
      commit: git("rev-parse", "HEAD"),
      dirty: git("status", "--porcelain", "--", ...paths).length > 0,
    };
  } catch {
    return { commit: "unknown", dirty: true };
  }
}
