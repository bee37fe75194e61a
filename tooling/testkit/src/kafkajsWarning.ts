const installed = Symbol.for("@ruststream/tooling-testkit: kafkajs negative timeout dropped");

/**
 * Drops, in this process, the one warning kafkajs 2.2.4 makes Node print and nothing else:
 * `RequestQueue.scheduleCheckPendingRequests` schedules its pending-request check at
 * `throttledUntil - Date.now()`, and `throttledUntil` starts at -1, so while the broker never
 * throttled the delay is minus the current time. Node clamps it to 1 ms, as it always did, and since
 * Node 23 also warns (`TimeoutNegativeWarning`, once per process). The check then finds nothing
 * pending: harmless, and kafkajs is unmaintained. Matched by the warning's type and by kafkajs's
 * request queue on the stack, so every other warning still prints (Node warns of a negative timeout
 * once per process: one of ours after kafkajs's went unsaid before this filter too). Idempotent: a
 * setup file runs once per test file.
 */
export function dropKafkajsNegativeTimeoutWarning(): void {
  const holder = process as { [installed]?: true };
  if (holder[installed]) return;
  holder[installed] = true;
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning, ...rest: unknown[]) {
    if (isNegativeTimeout(rest[0]) && fromKafkajsRequestQueue(new Error().stack)) return;
    return (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
}

/** The type Node's timers give it: `emitWarning(message, "TimeoutNegativeWarning")`. */
function isNegativeTimeout(typeOrOptions: unknown): boolean {
  const type =
    typeof typeOrOptions === "object" && typeOrOptions !== null
      ? (typeOrOptions as { type?: unknown }).type
      : typeOrOptions;
  return type === "TimeoutNegativeWarning";
}

function fromKafkajsRequestQueue(stack: string | undefined): boolean {
  return (
    stack !== undefined &&
    /\bscheduleCheckPendingRequests\b/.test(stack) &&
    /[\\/]kafkajs[\\/]src[\\/]network[\\/]requestQueue[\\/]index\.js:/.test(stack)
  );
}
