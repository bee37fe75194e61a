// @ts-check
// Process plumbing shared by every broker: detached starts recorded in pid files, liveness checks,
// waiting for a port or a condition, and log tails for failure messages.
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether a process with this pid is alive (and not a zombie).
 * @param {number} pid
 */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z";
  } catch {
    return true;
  }
}

/**
 * The pid recorded in a pid file, if that process still runs.
 * @param {string} pidFile
 * @returns {number | undefined}
 */
export function runningPid(pidFile) {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return isAlive(pid) ? pid : undefined;
}

/**
 * Starts a long-running process detached from this one (it outlives `up`), its output appended to
 * a log file, its pid written to a pid file. `uid`/`gid` run it as another user (from root: servers
 * that refuse root); the log file is opened here, so that user need not reach it.
 * @param {{ command: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv, logFile: string, pidFile: string, uid?: number, gid?: number }} opts
 * @returns {number} the pid
 */
export function startDetached({ command, args, cwd, env, logFile, pidFile, uid, gid }) {
  const out = openSync(logFile, "a");
  const child = spawn(command, args, {
    cwd,
    env: env ?? process.env,
    ...(uid === undefined ? {} : { uid }),
    ...(gid === undefined ? {} : { gid }),
    detached: true,
    stdio: ["ignore", out, out],
  });
  closeSync(out);
  // A missing binary is reported on "error" after spawn returns; without a listener it would crash.
  child.once("error", () => {});
  if (child.pid === undefined)
    throw new Error(`could not start ${command}: is it installed and on PATH?`);
  child.unref();
  writeFileSync(pidFile, `${child.pid}\n`);
  return child.pid;
}

/**
 * Stops the process recorded in a pid file: SIGTERM, then SIGKILL after `graceMs`. Only processes
 * `up` started are ever signalled, because only they have pid files.
 * @param {string} pidFile
 * @param {number} [graceMs]
 * @returns {Promise<boolean>} whether a process was running
 */
export async function stopByPidFile(pidFile, graceMs = 20_000) {
  const pid = runningPid(pidFile);
  if (pid === undefined) {
    rmSync(pidFile, { force: true });
    return false;
  }
  try {
    process.kill(pid, "SIGTERM");
  } catch {}
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
    while (isAlive(pid)) await sleep(50);
  }
  rmSync(pidFile, { force: true });
  return true;
}

/**
 * Whether something accepts TCP connections on 127.0.0.1:port.
 * @param {number} port
 * @param {string} [host]
 */
export function portOpen(port, host = "127.0.0.1") {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (/** @type {boolean} */ open) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Polls `check` until it returns true, the process dies, or the time runs out.
 * @param {() => Promise<boolean>} check
 * @param {{ timeoutMs: number, pid?: number, intervalMs?: number, what: string }} opts
 */
export async function waitFor(check, { timeoutMs, pid, intervalMs = 250, what }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (pid !== undefined && !isAlive(pid)) throw new Error(`${what}: the process exited`);
    if (Date.now() > deadline) throw new Error(`${what}: not ready after ${timeoutMs / 1000} s`);
    await sleep(intervalMs);
  }
}

/**
 * The last lines of a log file, for failure messages.
 * @param {string} file
 * @param {number} [lines]
 */
export function tail(file, lines = 40) {
  if (!existsSync(file)) return `(no log at ${file})`;
  const text = readFileSync(file, "utf8").trimEnd().split("\n");
  return text.slice(-lines).join("\n");
}

/**
 * Runs a command to completion, resolving its output, rejecting with its output on failure.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, input?: string, uid?: number, gid?: number }} [opts]
 * @returns {Promise<string>}
 */
export function run(command, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      ...(opts.uid === undefined ? {} : { uid: opts.uid }),
      ...(opts.gid === undefined ? {} : { gid: opts.gid }),
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(output);
      else
        reject(new Error(`${command} ${args.join(" ")} exited ${code}:\n${output.slice(-4000)}`));
    });
    if (opts.input !== undefined && child.stdin) {
      // A command may exit before reading its input; that is its answer, not our crash.
      child.stdin.on("error", () => {});
      child.stdin.end(opts.input);
    }
  });
}

/**
 * Resident memory of a process in MiB (VmRSS), for status and the README's figures.
 * @param {number} pid
 */
export function rssMiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Math.round(Number(match[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` while holding a lock file, so that two concurrent `up`s (vitest projects starting their
 * global setups together, a CLI beside a test run) never both start a broker. A lock whose holder
 * died is taken over.
 * @template T
 * @param {string} lockFile
 * @param {{ what: string, timeoutMs: number }} opts what: the broker, for the error message
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function withLock(lockFile, { what, timeoutMs }, fn) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      writeFileSync(lockFile, `${process.pid}\n`, { flag: "wx" });
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EEXIST") throw error;
      let holder = 0;
      try {
        holder = Number(readFileSync(lockFile, "utf8").trim());
      } catch {
        continue; // released in between
      }
      // An empty file is one being written; only a named holder that died is stale.
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
        rmSync(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${what}: another \`up\` (pid ${holder}) holds ${lockFile}; stop it, or delete the file if it is stale`,
        );
      }
      await sleep(250);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}
