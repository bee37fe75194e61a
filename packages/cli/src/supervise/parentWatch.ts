import { runtimeName } from "@ruststream/core/broker";

/** How often a supervised child on Deno looks at its parent process id. */
const checkEveryMs = 250;

/**
 * Calls `onGone` once this process's parent (its supervisor) has died, where the end of the IPC
 * channel is not enough: on Deno 2.9.6 a child whose last write on the channel went through just
 * before its supervisor was killed never got 'disconnect', and outlived it. There the parent's
 * death is read from `process.ppid`, which changes when the child is re-parented. Elsewhere the
 * channel's 'disconnect' says it, and this does nothing. Returns what stops the watch.
 */
export function watchParent(onGone: () => void): () => void {
  if (runtimeName() !== "deno") return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onGone();
    }
  }, checkEveryMs);
  // The service's own work keeps the process alive, not this watch.
  timer.unref();
  return () => clearInterval(timer);
}
