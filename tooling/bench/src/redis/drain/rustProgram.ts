// The Rust row's program: tooling/interop built (cargo caches it outside the clone, in the target
// directory the interop tests share), then copied aside for the run. Another checkout building
// into that shared directory (a test run of an older commit, say) replaces the binary with one
// that lacks `bench-redis-drain`; the copy keeps every round of this run on the program it
// checked.

import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const crate = fileURLToPath(new URL("../../../../interop/", import.meta.url));
const target = process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/ruststream/interop-target");

/** Builds tooling/interop and answers the path of a private copy that has `bench-redis-drain`. */
export function rustProgram(): string {
  const built = join(target, "release", "ruststream-interop");
  const copy = join(crate, "..", "..", ".cache", "bench-interop", "ruststream-interop");
  mkdirSync(join(copy, ".."), { recursive: true });
  for (let attempt = 1; attempt <= 3; attempt++) {
    execFileSync("cargo", ["build", "--release", "--locked"], {
      cwd: crate,
      env: { ...process.env, CARGO_TARGET_DIR: target, RUSTFLAGS: "" },
      stdio: ["ignore", "ignore", "inherit"],
    });
    copyFileSync(built, copy);
    const usage = spawnSync(copy, [], { encoding: "utf8" }).stderr;
    if (usage.includes("bench-redis-drain")) return copy;
    process.stderr.write(
      `the build in ${target} was replaced by another checkout's; building again\n`,
    );
  }
  throw new Error(
    `${built} keeps lacking bench-redis-drain: another checkout builds into ${target}`,
  );
}
