// @ts-check
// The interop suites run RustStream services built from tooling/interop. Built here, before the
// tests, rather than by the first suite that needs them: a cold build takes many minutes on two
// cores, and inside a test run it raced the suites' own work and a hook's timeout, and a crate
// download that failed once failed every interop suite at once. Here its crates are fetched with
// retries, and a build that fails stops the command saying so.
import { spawnSync } from "node:child_process";
import { homedir } from "node:os";
import { join } from "node:path";
import { fail, say, step } from "./step.mjs";

/** The build's target folder: outside the clone, shared with the interop suites (rustService.ts). */
export function interopTargetDir() {
  return process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/ruststream/interop-target");
}

/** Fetches the crates (three tries: crates.io over a flaky link), then builds, as the suites do. */
export function buildInterop(/** @type {string} */ root) {
  const cwd = join(root, "tooling/interop");
  const env = { ...process.env, CARGO_TARGET_DIR: interopTargetDir() };
  for (let attempt = 1; ; attempt++) {
    const fetched = spawnSync("cargo", ["fetch", "--locked", "--quiet"], {
      cwd,
      env,
      stdio: "inherit",
    });
    if (fetched.status === 0) break;
    if (attempt === 3) {
      fail(
        "fetching the interop program's crates failed three times (`cargo fetch --locked` in tooling/interop)",
        "check that crates.io is reachable (cargo's error is above), or set RUSTSTREAM_SKIP_INTEROP=1 to run without the interop suites",
      );
    }
    say(`fetching the interop program's crates failed (try ${attempt} of 3); trying again`);
  }
  say(
    "building the interop program (RustStream services, tooling/interop; the first time about 10 minutes on 2 cores)",
  );
  const started = Date.now();
  step("building the interop program", ["cargo", "build", "--release", "--locked", "--quiet"], {
    cwd,
    env,
    fix: "read cargo's error above; set RUSTSTREAM_SKIP_INTEROP=1 to run without the interop suites",
  });
  say(`interop program built in ${Math.round((Date.now() - started) / 1000)} s`);
}
