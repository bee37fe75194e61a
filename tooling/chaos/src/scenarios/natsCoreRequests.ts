// The core NATS scenario's load and its own verdict. Core NATS keeps nothing: a message published
// while no member of the queue group listens, or taken by a member that dies or is cut off before
// its handler ran, is gone (at most once, the server's promise, not a bug). So the load goes out as
// requests, each sent again until a reply comes back, and what the scenario promises is end to
// end: every message handled and answered, never handled more often than it was sent (by the
// publisher, or republished by the runtime after a reply that failed), every reply the answer to
// its own request.
import type { Handled, Published } from "../checker.js";
import type { Verdict } from "./target.js";

/** How long a request waits for its reply before it is sent again. */
export const NATS_CORE_REQUEST_TIMEOUT_MS = 2_000;
/** The wait before a request that failed (no responders: nobody in the group listened) goes again. */
export const NATS_CORE_AGAIN_MS = 200;
/** A message still unanswered this long after its first request: the services never recovered. */
export const NATS_CORE_GIVE_UP_MS = 30_000;
/**
 * The duplicate bound's in-flight per replica: the requests out at once. The load waits for every
 * request of a tick (a twentieth of a second's messages: 25 in the CI profile, 21 in the long one)
 * to be answered before it sends the next tick's, so a fault can make a replica handle at most those
 * again. Coarse: the verdict below holds each message to the requests sent for it.
 */
export const NATS_CORE_IN_FLIGHT = 32;

/** Why a request was sent again. */
export type RequestFailure = "timeout" | "no responders" | "other";

/** What the publisher sent and read back, per message. */
export class RequestLedger {
  readonly #sent = new Map<number, number>();
  readonly #failures = new Map<RequestFailure, number>();
  readonly #unanswered: number[] = [];
  readonly #mismatched: string[] = [];
  #answered = 0;

  sent(seq: number): void {
    this.#sent.set(seq, (this.#sent.get(seq) ?? 0) + 1);
  }

  failed(why: RequestFailure): void {
    this.#failures.set(why, (this.#failures.get(why) ?? 0) + 1);
  }

  /** A reply read for `message`: it must carry the message's own key and sequence number. */
  answered(message: Published, reply: unknown): void {
    this.#answered++;
    const body = reply as { k?: unknown; s?: unknown } | null;
    if (body?.k !== message.key || body?.s !== message.seq) {
      this.#mismatched.push(`seq ${message.seq} answered ${JSON.stringify(reply)}`);
    }
  }

  /** Given up on: no reply within the give-up time. */
  unanswered(seq: number): void {
    this.#unanswered.push(seq);
  }

  /** Every request answered by its own reply, and `deliveryFailures`. */
  verdict(messages: number, handled: readonly Handled[]): Verdict {
    const { failures, copies } = deliveryFailures(this.#sent, handled);
    const requests = [...this.#sent.values()].reduce((a, b) => a + b, 0);
    if (this.#unanswered.length > 0) {
      failures.push(
        `${this.#unanswered.length} requests never answered within ${NATS_CORE_GIVE_UP_MS / 1000} s (first: ${this.#unanswered.slice(0, 10).join(", ")})`,
      );
    }
    if (this.#mismatched.length > 0) {
      failures.push(
        `${this.#mismatched.length} replies not to their own request (${this.#mismatched.slice(0, 3).join("; ")})`,
      );
    }
    const failed = (why: RequestFailure) => this.#failures.get(why) ?? 0;
    return {
      failures,
      notes: [
        `${requests} requests for ${messages} messages, ${this.#answered} answered; sent again after ${failed("timeout")} timeouts, ${failed("no responders")} no-responders, ${failed("other")} other failures`,
        `${copies} handlings of the runtime's republished copies (a reply that failed to publish)`,
      ],
    };
  }
}

/**
 * Each message's first-attempt handlings within the sends of it (core NATS delivers a publish to
 * one member at most once), and each attempt's handlings within the previous attempt's (a runtime
 * copy follows a handling whose reply failed to publish).
 */
export function deliveryFailures(
  sent: ReadonlyMap<number, number>,
  handled: readonly Handled[],
): { failures: string[]; copies: number } {
  const perSeq = new Map<number, number[]>();
  for (const h of handled) {
    const attempt = Number.isSafeInteger(h.attempt) ? (h.attempt as number) : 1;
    const counts = perSeq.get(h.seq) ?? [];
    counts[attempt] = (counts[attempt] ?? 0) + 1;
    perSeq.set(h.seq, counts);
  }
  let overSent = 0;
  let copiesWithoutCause = 0;
  let copies = 0;
  const overSample: string[] = [];
  for (const [seq, counts] of perSeq) {
    const first = counts[1] ?? 0;
    if (first > (sent.get(seq) ?? 0)) {
      overSent++;
      if (overSample.length < 5) overSample.push(`seq ${seq}: ${first} for ${sent.get(seq) ?? 0}`);
    }
    for (let attempt = 2; attempt < counts.length; attempt++) {
      const n = counts[attempt] ?? 0;
      copies += n;
      if (n > (counts[attempt - 1] ?? 0)) copiesWithoutCause++;
    }
  }
  const failures: string[] = [];
  if (overSent > 0) {
    failures.push(
      `${overSent} messages handled more often than they were sent (${overSample.join("; ")})`,
    );
  }
  if (copiesWithoutCause > 0) {
    failures.push(
      `${copiesWithoutCause} messages with more runtime copies handled than handlings before them`,
    );
  }
  return { failures, copies };
}
