import { type ChildProcess, spawn } from "node:child_process";
import { isChildMessage, supervisedEnv } from "./protocol.js";
import { selfCommand } from "./selfCommand.js";

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
 * Starts `ruststream <args>` as a child of this process, on the same runtime with the same flags
 * (`selfCommand`), sharing this terminal's output, with an IPC channel for its reports.
 */
export function startChild(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Child {
  const self = selfCommand();
  const proc: ChildProcess = spawn(self.executable, [...self.args, ...args], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...env, [supervisedEnv]: "1" },
  });
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null;
  // Not `proc.kill`: on Deno it closes the IPC channel (the child reads "supervisor gone") and
  // reports the child as ended by the signal even when it drained and exited 0.
  const signal = (name: NodeJS.Signals): void => {
    if (proc.pid === undefined || !running()) return;
    try {
      process.kill(proc.pid, name);
    } catch (error) {
      // Exited between the check and the signal: its exit event reports how it ended.
      if ((error as { code?: unknown }).code !== "ESRCH") throw error;
    }
  };
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
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
  };
}

/** `exit 0`, `exit 1`, `killed by SIGKILL`. */
export function describeExit(exit: ChildExit): string {
  return exit.signal === null ? `exit ${exit.code ?? "?"}` : `killed by ${exit.signal}`;
}
