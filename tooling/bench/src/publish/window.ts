// The two ways a row keeps publishes in flight, timed from the first send to the last receipt:
// a window (a new publish starts as each one is confirmed, so `depth` are always outstanding, as a
// service publishing under load has them), and lockstep batches (`depth` sent together, all awaited,
// then the next `depth`: an ioredis pipeline, the shape a batching client gives).

/**
 * How long a row's publishing took, and this process's CPU time over the same span (user + system,
 * every thread: librdkafka's too). CPU per message is less at the mercy of the machine's load than a
 * rate, and it is where the app's extra work shows.
 */
export interface Timed {
  readonly ms: number;
  readonly cpuMs: number;
}

function cpuMsNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Sends message `i` and resolves once the broker confirmed it. */
export type Send = (i: number) => Promise<unknown>;

/** Publishes `count` messages with at most `depth` unconfirmed. */
export function windowed(count: number, depth: number, send: Send): Promise<Timed> {
  return new Promise<Timed>((resolve, reject) => {
    let next = 0;
    let confirmed = 0;
    let failed = false;
    const cpuBefore = cpuMsNow();
    const began = performance.now();
    const onReceipt = (): void => {
      confirmed++;
      if (confirmed === count) {
        resolve({ ms: performance.now() - began, cpuMs: cpuMsNow() - cpuBefore });
      } else if (next < count && !failed) start();
    };
    const onFailure = (error: unknown): void => {
      // The first failure ends the row: a bench that loses messages measures nothing.
      if (failed) return;
      failed = true;
      reject(error);
    };
    const start = (): void => {
      const i = next++;
      send(i).then(onReceipt, onFailure);
    };
    for (let k = 0; k < Math.min(depth, count); k++) start();
  });
}

/** Publishes `count` messages as lockstep batches of `depth`; `batch(from, to)` sends [from, to). */
export async function batched(
  count: number,
  depth: number,
  batch: (from: number, to: number) => Promise<void>,
): Promise<Timed> {
  const cpuBefore = cpuMsNow();
  const began = performance.now();
  for (let from = 0; from < count; from += depth) await batch(from, Math.min(count, from + depth));
  return { ms: performance.now() - began, cpuMs: cpuMsNow() - cpuBefore };
}
