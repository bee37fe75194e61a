import type { Clock, ClockTimer } from "@ruststream/core";
import type { PrioritySettings } from "../priority.js";

/** The server's pin TTL when the consumer sets none (its `priority_timeout` default). */
const DEFAULT_PIN_TTL_MS = 2 * 60_000;

/** One client of a consumer (a connection's link to it) and what its pulls carry for the group. */
export interface PullClient {
  readonly priority: PrioritySettings | undefined;
}

/** A pull waiting for messages, as the group sees it: whose it is. */
export interface GroupPull {
  readonly client: PullClient;
}

/** What the consumer holds when it chooses a pull, for an overflow group's thresholds. */
export interface Backlog {
  /** Messages not yet delivered, the one about to be handed out among them (`num_pending`). */
  readonly undelivered: () => number;
  /** Messages delivered and not settled (`num_ack_pending`). */
  readonly ackPending: number;
}

/**
 * A consumer's priority group as the server runs one: which of the waiting pulls (in the order they
 * asked) gets the next message.
 *
 * - `pinned`: the first pull to be served pins its client; only that client's pulls are served.
 *   The pin lapses once the client has had no pull waiting with room for the pin TTL (on the
 *   stand-in's clock), at once when its link lets go, or by an unpin; the next pull served is
 *   pinned anew (the pulls wait in turn, so the unpinned client's, served last, comes after the
 *   others').
 * - `overflow`: a pull whose client gives `minPending` or `minAckPending` is served only while at
 *   least that many messages wait undelivered (counting the one handed out), or at least that many
 *   are delivered and unsettled; one giving neither, as usual.
 * - `prioritized`: the waiting pull of the lowest priority level, the first to ask among equals.
 */
export class StandInPriorityGroup {
  readonly #settings: PrioritySettings;
  readonly #clock: Clock;
  readonly #onUnpinned: () => void;
  #pinned: PullClient | undefined;
  /** Running while the pinned client has no pull waiting with room. */
  #lapse: ClockTimer | undefined;

  constructor(settings: PrioritySettings, clock: Clock, onUnpinned: () => void) {
    this.#settings = settings;
    this.#clock = clock;
    this.#onUnpinned = onUnpinned;
  }

  /** The pull served next among `waiting` (in the order they asked), or `undefined`: none now. */
  choose<P extends GroupPull>(waiting: readonly P[], backlog: Backlog): P | undefined {
    const settings = this.#settings;
    if (settings.policy === "pinned") {
      if (this.#pinned === undefined) {
        const first = waiting[0];
        if (first !== undefined) this.#pinned = first.client;
        return first;
      }
      return waiting.find((w) => w.client === this.#pinned);
    }
    if (settings.policy === "prioritized") {
      let best: P | undefined;
      for (const w of waiting) if (best === undefined || level(w) < level(best)) best = w;
      return best;
    }
    return waiting.find((w) => overflowServes(w.client.priority, backlog));
  }

  /** The client that holds the pin, or `undefined`. */
  get pinned(): PullClient | undefined {
    return this.#pinned;
  }

  /**
   * Whether `client` has a pull waiting with room: the pinned client pulls, its pin held; without
   * one, its pin TTL runs, and the pin lapses when it runs out.
   */
  pulling(client: PullClient, pulling: boolean): void {
    if (this.#settings.policy !== "pinned" || client !== this.#pinned) return;
    this.#lapse?.cancel();
    this.#lapse = undefined;
    if (pulling) return;
    const ttl = this.#settings.pinTtlMs ?? DEFAULT_PIN_TTL_MS;
    this.#lapse = this.#clock.setTimer(ttl, () => {
      this.#lapse = undefined;
      this.#unpin();
    });
  }

  /** `client` lets go (its link closed): a pin it holds is given up at once. */
  letGo(client: PullClient): void {
    if (client === this.#pinned) this.#unpin();
  }

  /** An unpin (the server's `$JS.API.CONSUMER.UNPIN`): whether a client held the pin. */
  unpin(): boolean {
    if (this.#pinned === undefined) return false;
    this.#unpin();
    return true;
  }

  /** Gone with its consumer: no timer left running. */
  close(): void {
    this.#lapse?.cancel();
    this.#lapse = undefined;
    this.#pinned = undefined;
  }

  #unpin(): void {
    this.#lapse?.cancel();
    this.#lapse = undefined;
    this.#pinned = undefined;
    this.#onUnpinned();
  }
}

function level(pull: GroupPull): number {
  const priority = pull.client.priority;
  return priority?.policy === "prioritized" ? priority.priority : 0;
}

/** The server serves an overflow pull past either of its thresholds, or with neither. */
function overflowServes(priority: PrioritySettings | undefined, backlog: Backlog): boolean {
  if (priority?.policy !== "overflow") return true;
  const { minPending, minAckPending } = priority;
  if (minPending === undefined && minAckPending === undefined) return true;
  return (
    (minPending !== undefined && minPending <= backlog.undelivered()) ||
    (minAckPending !== undefined && minAckPending <= backlog.ackPending)
  );
}
