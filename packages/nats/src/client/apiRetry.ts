import { JetStreamApiError } from "@nats-io/jetstream";
import { RequestError, TimeoutError } from "@nats-io/transport-node";
import { RustStreamError } from "@ruststream/core";

// A JetStream API call on a cluster can fail for a moment and then succeed: the group that must
// answer (the meta group for a creation, a stream's or a consumer's own Raft group for a lookup)
// has no leader yet, or is too loaded to answer in the API's time. These are retried with a
// growing wait, for a bounded time; every other answer (a stream that is not there, a consumer's
// settings refused, permissions) is the caller's at once, as no retry changes it.

/** The first wait between two tries; it doubles with each try, up to MAX_WAIT_MS. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 4000;

/** JSClusterNotAvailErr: "JetStream system temporarily unavailable", the answer of a group with no leader. */
const CLUSTER_NOT_AVAILABLE = 10008;

/**
 * An answer transient only where the caller got it, with why: a consumer's lookup answered
 * "consumer not found" (10014) right after the server created it, by a replica whose Raft node
 * for the consumer does not run yet (nats-server answers so while the group forms).
 */
export class TransientAnswer extends Error {
  constructor(reason: string, cause: unknown) {
    super(reason, { cause });
  }
}

/**
 * Why `error` is a failure that a later try may not meet, or `undefined` for one it would meet
 * again. `jetStreamOn`: the server said (its INFO) that it runs JetStream, so nobody answering the
 * API is a node still starting it, not a server without it.
 */
export function transientReason(error: unknown, jetStreamOn: boolean): string | undefined {
  if (error instanceof TransientAnswer) return error.message;
  if (error instanceof TimeoutError) return "the JetStream API did not answer within apiTimeoutMs";
  if (error instanceof JetStreamApiError && error.apiError().err_code === CLUSTER_NOT_AVAILABLE) {
    return `the server answered "${error.message}" (10008: the group that answers has no leader)`;
  }
  // The client's JetStreamNotEnabled (not exported) over the request's no-responders error.
  if (jetStreamOn && error instanceof Error && isNoResponders(error.cause)) {
    return "no server answered the JetStream API (no responders: JetStream still starting on the node)";
  }
  return undefined;
}

function isNoResponders(error: unknown): boolean {
  return error instanceof RequestError && error.isNoResponders();
}

/** What the retried call is about, for the error once the bound is past. */
export interface RetriedCall {
  /** What it makes or looks up: `the consumer "billing" on the stream "ORDERS"`. */
  readonly what: string;
  /** What an operator checks when it keeps failing. */
  readonly check: string;
}

/** Bounded retries of transient JetStream API failures, on one connection. */
export class ApiRetry {
  readonly #withinMs: number;
  readonly #jetStreamOn: () => boolean;

  /**
   * `withinMs`: no try starts later than this after the first (so a call takes at most that and
   * one API timeout more). `jetStreamOn`: whether the server said it runs JetStream.
   */
  constructor(withinMs: number, jetStreamOn: () => boolean) {
    this.#withinMs = withinMs;
    this.#jetStreamOn = jetStreamOn;
  }

  /**
   * `attempt()` until it resolves, or fails for a reason no retry fixes (thrown as it came), or the
   * bound is past: then a `broker-failure` naming the call, the last reason and what to check.
   */
  async run<T>(call: RetriedCall, attempt: () => Promise<T>): Promise<T> {
    const started = performance.now();
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        const reason = transientReason(error, this.#jetStreamOn());
        if (reason === undefined) throw error;
        const wait = Math.min(FIRST_WAIT_MS * 2 ** (tries - 1), MAX_WAIT_MS);
        const elapsed = performance.now() - started;
        if (elapsed + wait > this.#withinMs) {
          throw new RustStreamError(
            "broker-failure",
            `${call.what}: the JetStream API still failed after ${tries} tries in ${(elapsed / 1000).toFixed(1)} s, last because ${reason}. Check ${call.check}; on a loaded cluster, apiTimeoutMs (each call's time) and apiRetryWithinMs (how long such failures are retried) give it longer`,
            { cause: error },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
