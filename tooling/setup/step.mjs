// @ts-check
// One way to run a set-up step: its output is shown (or kept and shown when it fails), and a failure
// ends the command with what failed and what to do about it, never with an exit code alone.
import { spawnSync } from "node:child_process";

/** Prints a line of the set-up's own, told apart from the tools' output. */
export function say(/** @type {string} */ line) {
  process.stdout.write(`[setup] ${line}\n`);
}

/** Stops the command: names what failed and the fix, then exits 1. */
export function fail(/** @type {string} */ what, /** @type {string} */ fix) {
  process.stderr.write(`\n[setup] ${what}\n[setup] what to do: ${fix}\n`);
  process.exit(1);
}

/**
 * Runs a command. `quiet` keeps its output and prints it only when it fails (for steps whose
 * success says nothing worth reading); otherwise the output streams as it comes.
 * @param {string} what a few words for the step, as in "installing the workspace"
 * @param {string[]} argv the command and its arguments
 * @param {{ fix: string, quiet?: boolean, env?: NodeJS.ProcessEnv, cwd?: string }} options
 */
export function step(what, argv, options) {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error("step: no command");
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: options.quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) fail(`${what} failed: ${command}: ${result.error.message}`, options.fix);
  if (result.status !== 0) {
    if (options.quiet) process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    const how = result.signal ? `was killed by ${result.signal}` : `exited with ${result.status}`;
    fail(`${what} failed: \`${argv.join(" ")}\` ${how}`, options.fix);
  }
}

/** Whether a command runs at all (found on PATH and answering `args`). */
export function answers(
  /** @type {string} */ command,
  /** @type {string[]} */ args = ["--version"],
) {
  const result = spawnSync(command, args, { stdio: "ignore" });
  return result.error === undefined && result.status === 0;
}
