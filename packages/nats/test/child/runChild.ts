import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

/** How long a child may run before it counts as held alive (it exits in about 1 s otherwise). */
export const HELD_MS = 20_000;

/**
 * Runs a child script of test/child in its own Node process (the package's sources through tsx):
 * its exit code and what it printed; one still running after HELD_MS is killed and reported as held.
 * `env` is the child's environment (this process's when not given).
 */
export function runChild(
  script: string,
  arg: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@ruststream/source",
      "--import",
      "tsx",
      fileURLToPath(new URL(`./${script}`, import.meta.url)),
      arg,
    ],
    { cwd: PACKAGE, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const held = setTimeout(() => {
    out += `still running after ${HELD_MS} ms: held alive`;
    child.kill("SIGKILL");
  }, HELD_MS);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      clearTimeout(held);
      resolve({ code, out });
    }),
  );
}
