import { type ChildProcess, spawn } from "node:child_process";
import { isChildMessage, supervisedEnv } from "./protocol.js";

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One `ruststream run` process a supervisor started. */
export interface Child {
  readonly pid: number | undefined;
  /** True once the child reported its app started. */
  readonly isReady: boolean;
  /** Resolves when the child reports its app started; never if it dies first. */
  readonly ready: Promise<void>;
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<ChildExit>;
  /** Asks it to drain and exit (SIGTERM). */
  stop(): void;
  /** Ends it at once (SIGKILL): the supervisor's answer to a second signal. */
  kill(): void;
}

/**
 * Starts `ruststream <args>` as a child of this process, on the same Node with the same flags (a
 * loader or `--conditions` the supervisor was started with applies to the service too), sharing
 * this terminal's output, with an IPC channel for its reports.
 */
export function startChild(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Child {
  const script = process.argv[1];
  if (script === undefined) throw new Error("process.argv[1] is not set: cannot start a child");
  // A debugger port cannot be shared: the children run without the supervisor's --inspect.
  const execArgv = process.execArgv.filter((flag) => !flag.startsWith("--inspect"));
  const proc: ChildProcess = spawn(process.execPath, [...execArgv, script, ...args], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...env, [supervisedEnv]: "1" },
  });
  let isReady = false;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  proc.on("message", (message) => {
    if (isChildMessage(message) && message.type === "ready") {
      isReady = true;
      markReady();
    }
  });
  const exited = new Promise<ChildExit>((resolve) => {
    proc.on("exit", (code, signal) => resolve({ code, signal }));
    // A spawn that failed outright (no such executable) never exits: report it as a failure.
    proc.on("error", () => resolve({ code: 1, signal: null }));
  });
  return {
    pid: proc.pid,
    get isReady() {
      return isReady;
    },
    ready,
    exited,
    stop: () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    },
    kill: () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    },
  };
}

/** `exit 0`, `exit 1`, `killed by SIGKILL`. */
export function describeExit(exit: ChildExit): string {
  return exit.signal === null ? `exit ${exit.code ?? "?"}` : `killed by ${exit.signal}`;
}
