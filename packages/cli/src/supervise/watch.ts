import type { Logger } from "@ruststream/core";
import type { ExitCode } from "../cliError.js";
import { ChangeQueue } from "./changeQueue.js";
import { type ChildExit, describeExit, startChild } from "./child.js";
import { supervisorSignals } from "./signals.js";
import { watchTree } from "./watchTree.js";

export interface WatchOptions {
  /** The folder whose files restart the service. */
  readonly folder: string;
  /** `ruststream` arguments of the service's process: `run <module> ...`, without `--watch`. */
  readonly childArgs: readonly string[];
  readonly log: Logger;
  /** Quiet time after the last change before restarting (default 300 ms). */
  readonly debounceMs?: number;
}

type Next =
  | { readonly kind: "change"; readonly paths: string[] }
  | { readonly kind: "exit"; readonly exit: ChildExit }
  | { readonly kind: "signal" };

/**
 * Runs the service in a child process and restarts it when a file under `folder` changes. The
 * running service is stopped as SIGTERM stops it (it stops pulling and drains its handlers, which
 * settle what they took) and has exited before the next one starts, so no message in flight is
 * lost or handled twice by the restart: the new process takes up after what the old one settled.
 */
export async function watchService(options: WatchOptions): Promise<ExitCode> {
  const { log } = options;
  const signals = supervisorSignals(log);
  const changes = new ChangeQueue(options.debounceMs ?? 300);
  const watcher = watchTree(options.folder, (path) => {
    log.debug({ path }, "changed");
    changes.note(path);
  });
  log.info({ folder: options.folder }, "watching for changes");
  const signalled = signals.first.then((): Next => ({ kind: "signal" }));
  try {
    let restarts = 0;
    for (;;) {
      changes.clear();
      const child = startChild(options.childArgs);
      const exited = child.exited.then((exit): Next => ({ kind: "exit", exit }));
      const next = await Promise.race([
        changes.next().then((paths): Next => ({ kind: "change", paths })),
        exited,
        signalled,
      ]);
      if (next.kind === "exit") {
        log.warn(
          { exit: describeExit(next.exit) },
          "the service exited; it starts again at the next change",
        );
        const after = await Promise.race([
          changes.next().then((paths): Next => ({ kind: "change", paths })),
          signalled,
        ]);
        if (after.kind !== "change") return 0;
        log.info({ changed: after.paths.join(",") }, "changed: starting the service");
        continue;
      }
      if (next.kind === "change") {
        restarts += 1;
        log.info(
          { changed: next.paths.join(","), restart: restarts },
          "changed: restarting once the running service has drained",
        );
      }
      child.stop();
      const exit = await Promise.race([child.exited, signals.second.then(() => undefined)]);
      if (exit === undefined) {
        child.kill();
        await child.exited;
        return 1;
      }
      if (next.kind === "signal") return exit.code === 0 ? 0 : 1;
      log.info({ exit: describeExit(exit) }, "the service stopped");
    }
  } finally {
    watcher.close();
    changes.close();
    signals.dispose();
  }
}
