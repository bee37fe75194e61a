import type { Logger } from "@ruststream/core";
import { watchParent } from "./supervise/parentWatch.js";

export interface StopRequests {
  /** Resolves with what asked the service to stop: `signal SIGTERM`, `supervisor gone`. */
  readonly requested: Promise<string>;
  /**
   * Removes the listeners; under a supervisor the signal ones stay, answering "already stopping",
   * since its forwarded SIGTERM can arrive after a quick drain, and a process with no listener left
   * would die of it and be counted unclean.
   */
  dispose(): void;
}

const signals = ["SIGTERM", "SIGINT"] as const;

/**
 * Listens for what stops a running service: SIGTERM or SIGINT, and under a supervisor the end of
 * its IPC channel or, on Deno, of its parent process (`watchParent`): the supervisor died, and a
 * service must not outlive it. A second signal at a lone
 * process exits at once, as a person pressing Ctrl-C twice means; under a supervisor it is ignored,
 * since a terminal's Ctrl-C reaches the whole process group and the supervisor forwards one more:
 * the supervisor escalates on its own second signal, with SIGKILL.
 */
export function stopRequests(log: Logger, supervised: boolean): StopRequests {
  let resolve!: (reason: string) => void;
  const requested = new Promise<string>((r) => {
    resolve = r;
  });
  let seen = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!seen) {
      seen = true;
      resolve(`signal ${signal}`);
    } else if (supervised) {
      log.debug({ signal }, "already stopping");
    } else {
      log.warn({ signal }, "second signal: exiting without waiting for the drain");
      process.exit(1);
    }
  };
  const onDisconnect = (): void => {
    if (seen) return;
    seen = true;
    resolve("supervisor gone");
  };
  for (const signal of signals) process.on(signal, onSignal);
  if (supervised) process.on("disconnect", onDisconnect);
  const unwatch = supervised ? watchParent(onDisconnect) : () => {};
  return {
    requested,
    dispose() {
      if (!supervised) for (const signal of signals) process.off(signal, onSignal);
      process.off("disconnect", onDisconnect);
      unwatch();
    },
  };
}
