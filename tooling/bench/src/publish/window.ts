// The two ways a row keeps publishes in flight, timed from the first send to the last receipt:
// a window (a new publish starts as each one is confirmed, so `depth` are always outstanding, as a
// service publishing under load has them), and lockstep batches (`depth` sent together, all awaited,
// then the next `depth`: an ioredis pipeline, the shape a batching client gives).

/** Sends message `i` and resolves once the broker confirmed it. */
export type Send = (i: number) => Promise<unknown>;

/** Publishes `count` messages with at most `depth` unconfirmed; resolves with the milliseconds. */
export function windowed(count: number, depth: number, send: Send): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let next = 0;
    let confirmed = 0;
    let failed = false;
    const began = performance.now();
    const onReceipt = (): void => {
      confirmed++;
      if (confirmed === count) resolve(performance.now() - began);
      else if (next < count && !failed) start();
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
): Promise<number> {
  const began = performance.now();
  for (let from = 0; from < count; from += depth) await batch(from, Math.min(count, from + depth));
  return performance.now() - began;
}
