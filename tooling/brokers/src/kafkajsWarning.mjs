// @ts-check
const installed = Symbol.for("@ruststream/tooling-brokers: kafkajs negative timeout dropped");

/**
 * Drops, in this process, the one warning kafkajs 2.2.4 makes Node print and nothing else:
 * `RequestQueue.scheduleCheckPendingRequests` schedules its pending-request check at
 * `throttledUntil - Date.now()`, and `throttledUntil` starts at -1, so while the broker never
 * throttled the delay is minus the current time. Node clamps it to 1 ms, as it always did, and since
 * Node 23 also warns (`TimeoutNegativeWarning`, once per process). The check then finds nothing
 * pending: harmless, and kafkajs is unmaintained. Matched by the warning's type and by kafkajs's
 * request queue on the stack, so every other warning still prints (Node warns of a negative timeout
 * once per process: one of ours after kafkajs's went unsaid before this filter too). Idempotent: a
 * setup file runs once per test file. Here, beside the Kafka this package runs, so its own tests
 * use it too; the tests of the packages reach it through tooling/testkit.
 */
export function dropKafkajsNegativeTimeoutWarning() {
  const holder = /** @type {{ [installed]?: true }} */ (/** @type {unknown} */ (process));
  if (holder[installed]) return;
  holder[installed] = true;
  const emit = process.emitWarning;
  /** @type {(warning: string | Error, ...rest: unknown[]) => void} */
  const dropping = (warning, ...rest) => {
    if (isNegativeTimeout(rest[0]) && fromKafkajsRequestQueue(new Error().stack)) return;
    /** @type {(...args: unknown[]) => void} */ (emit).call(process, warning, ...rest);
  };
  process.emitWarning = /** @type {typeof process.emitWarning} */ (dropping);
}

/**
 * The type Node's timers give it: `emitWarning(message, "TimeoutNegativeWarning")`.
 * @param {unknown} typeOrOptions
 */
function isNegativeTimeout(typeOrOptions) {
  const type =
    typeof typeOrOptions === "object" && typeOrOptions !== null
      ? /** @type {{ type?: unknown }} */ (typeOrOptions).type
      : typeOrOptions;
  return type === "TimeoutNegativeWarning";
}

/** @param {string | undefined} stack */
function fromKafkajsRequestQueue(stack) {
  return (
    stack !== undefined &&
    /\bscheduleCheckPendingRequests\b/.test(stack) &&
    /[\\/]kafkajs[\\/]src[\\/]network[\\/]requestQueue[\\/]index\.js:/.test(stack)
  );
}
