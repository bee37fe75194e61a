// @ts-check
// One way to run a command in the rehearsal: asynchronously (so a signal reaches our handlers while a
// long install runs), in its own process group (so a timeout or a stop ends its children too, an
// install's node-gyp among them), its output kept for the report and the step's failure.
import { spawn } from "node:child_process";

/** @typedef {{ ok: boolean, status: number | null, signal: string | null, output: string, ms: number, why: string }} RunResult */

/** Every process group still running, ended by `stopAll` when the rehearsal is stopped. */
const running = new Set();

/**
 * @typedef {{ pid: number | undefined, output: () => string, signal: (name: NodeJS.Signals) => void,
 *   exited: Promise<RunResult> }} Started
 * A command still running: its output so far, a signal to its own process (not its group: a
 * supervisor forwards it as a user's `kill` does), and its end.
 */

/**
 * Runs a command to its end.
 * @param {string[]} argv
 * @param {{ cwd: string, env?: NodeJS.ProcessEnv, timeoutMs?: number, echo?: boolean }} options
 * @returns {Promise<RunResult>}
 */
export function run(argv, options) {
  return start(argv, options).exited;
}

/**
 * Starts a command (a service that runs until it is signalled); `timeoutMs` bounds its whole life.
 * @param {string[]} argv
 * @param {{ cwd: string, env?: NodeJS.ProcessEnv, timeoutMs?: number, echo?: boolean }} options
 * @returns {Started}
 */
export function start(argv, options) {
  const [command, ...args] = argv;
  if (command === undefined) throw new Error("run: no command");
  const started = Date.now();
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  running.add(child);
  let output = "";
  /** @param {Buffer} chunk */
  const keep = (chunk) => {
    output += chunk.toString("utf8");
    if (options.echo) process.stdout.write(chunk);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      killGroup(child.pid);
    },
    options.timeoutMs ?? 10 * 60_000,
  );
  /** @type {Promise<RunResult>} */
  const exited = new Promise((resolve) => {
    /** @param {number | null} status @param {string | null} signal @param {string} [error] */
    const done = (status, signal, error) => {
      clearTimeout(timer);
      running.delete(child);
      const ms = Date.now() - started;
      const ok = error === undefined && status === 0 && !timedOut;
      const why = ok
        ? ""
        : timedOut
          ? `timed out after ${Math.round(ms / 1000)} s`
          : (error ?? (signal ? `was killed by ${signal}` : `exited with ${status}`));
      resolve({ ok, status, signal, output, ms, why });
    };
    child.on("error", (error) => done(null, null, `${command}: ${error.message}`));
    child.on("close", (status, signal) => done(status, signal));
  });
  return {
    pid: child.pid,
    output: () => output,
    signal: (name) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(name);
    },
    exited,
  };
}

/** @param {number | undefined} pid */
function killGroup(pid) {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Ends every command still running (the rehearsal was stopped). */
export function stopAll() {
  for (const child of running) killGroup(child.pid);
}

/**
 * The last `lines` lines of a command's output, indented, for a failure's detail. When the output
 * is longer, the message of its first error comes first: an uncaught error prints its message
 * above its stack, and a nested cause's stack pushes it out of the last lines (a native addon
 * built for another Node says which one only there).
 */
export function tail(/** @type {string} */ output, lines = 15) {
  const all = output.trimEnd().split("\n");
  const last = all.slice(-lines);
  const earlier = all.slice(0, -lines);
  const at = earlier.findIndex((line) => /^\s*(\w+)?Error\b/.test(line));
  const message = [];
  if (at !== -1) {
    for (const line of earlier.slice(at, at + 6)) {
      if (/^\s+at /.test(line)) break;
      message.push(line);
    }
    message.push("...");
  }
  return [...message, ...last].map((line) => `      | ${line}`).join("\n");
}
