import type { Logger } from "@ruststream/core";
import type { ExitCode } from "../cliError.js";
import { type Child, type ChildExit, describeExit, startChild } from "./child.js";
import { workerEnv } from "./protocol.js";
import { supervisorSignals } from "./signals.js";

export interface WorkersOptions {
  readonly count: number;
  /** `ruststream` arguments of worker `n` (1 to count): `run <module> ...`, without `--workers`. */
  readonly childArgs: (worker: number) => readonly string[];
  readonly log: Logger;
  /** The first restart's delay, doubled after each death in a row up to `maxBackoffMs` (500 ms). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

/** A worker that ran this long after it was ready counts as healthy: its next death restarts at once. */
const healthyAfterMs = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `count` processes of the service. Each is a `ruststream run` child: where the broker has
 * consumer groups they share the one the app's configuration names, so they divide the work. A
 * worker that dies is started again after a back-off that grows while it keeps dying. On SIGTERM or
 * SIGINT each worker is asked to drain (SIGTERM); the supervisor exits 0 once every one has exited
 * cleanly; a second signal kills them.
 */
export async function runWorkers(options: WorkersOptions): Promise<ExitCode> {
  const { log } = options;
  const signals = supervisorSignals(log);
  const initial = options.backoffMs ?? 500;
  const max = options.maxBackoffMs ?? 30_000;
  let stopping = false;
  const current = new Map<number, Child>();
  const stopped = signals.first.then(() => {
    stopping = true;
    for (const child of current.values()) child.stop();
  });

  const supervise = async (worker: number): Promise<ChildExit> => {
    let delay = initial;
    for (;;) {
      const child = startChild(options.childArgs(worker), { [workerEnv]: String(worker) });
      current.set(worker, child);
      const startedAt = Date.now();
      let readyAt: number | undefined;
      void child.ready.then(() => {
        readyAt = Date.now();
      });
      log.info({ worker, pid: child.pid }, "worker started");
      if (stopping) child.stop();
      const exit = await child.exited;
      current.delete(worker);
      if (stopping) {
        log.info({ worker, pid: child.pid, exit: describeExit(exit) }, "worker stopped");
        return exit;
      }
      if (readyAt !== undefined && Date.now() - readyAt >= healthyAfterMs) delay = initial;
      log.warn(
        {
          worker,
          pid: child.pid,
          exit: describeExit(exit),
          ranMs: Date.now() - startedAt,
          restartInMs: delay,
        },
        "worker died; restarting it",
      );
      await Promise.race([sleep(delay), stopped]);
      if (stopping) return { code: 0, signal: null };
      delay = Math.min(delay * 2, max);
    }
  };

  const all = Promise.all(Array.from({ length: options.count }, (_, i) => supervise(i + 1)));
  try {
    const exits = await Promise.race([all, signals.second.then(() => undefined)]);
    if (exits === undefined) {
      for (const child of current.values()) child.kill();
      await all;
      return 1;
    }
    const clean = exits.every((exit) => exit.code === 0);
    log.info({ workers: options.count, clean }, "all workers stopped");
    return clean ? 0 : 1;
  } finally {
    signals.dispose();
  }
}
