import type { Logger } from "@ruststream/core";

export interface SupervisorSignals {
  /** The first SIGTERM or SIGINT: drain the children. */
  readonly first: Promise<NodeJS.Signals>;
  /** The second: end them at once. */
  readonly second: Promise<NodeJS.Signals>;
  dispose(): void;
}

/** A supervisor's signals: the first asks for a drain, the second for an end now. */
export function supervisorSignals(log: Logger): SupervisorSignals {
  let resolveFirst!: (signal: NodeJS.Signals) => void;
  let resolveSecond!: (signal: NodeJS.Signals) => void;
  const first = new Promise<NodeJS.Signals>((r) => {
    resolveFirst = r;
  });
  const second = new Promise<NodeJS.Signals>((r) => {
    resolveSecond = r;
  });
  let count = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    count += 1;
    if (count === 1) {
      log.info({ signal }, "stopping: draining the service");
      resolveFirst(signal);
    } else if (count === 2) {
      log.warn({ signal }, "second signal: killing the service without waiting for the drain");
      resolveSecond(signal);
    }
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return {
    first,
    second,
    dispose() {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    },
  };
}
