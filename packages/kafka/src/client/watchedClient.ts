import type { LinkStates } from "@ruststream/core/broker";

// One Kafka client (a producer, a consumer, a reader) as its link's LinkStates counts it. The
// engines say when a client lost the cluster (librdkafka's all-brokers-down event, a kafkajs
// consumer's crash and restart, a kafkajs produce request failing on its connection), but neither
// says when it is back for every client: so a client that lost the cluster asks it, once a second,
// until it answers (the probe), unless a signal of its own says so first.

/** How long the probe waits between two questions to the cluster. */
const PROBE_EVERY_MS = 1000;

export class WatchedClient {
  readonly #states: LinkStates;
  /** Asks the cluster something small through this client's connections; resolves once it answers. */
  readonly #probe: (() => Promise<unknown>) | undefined;
  #state: "connected" | "reconnecting" | "lost" | "failed" = "connected";
  /** The pause before the next question, while one is due. */
  #timer: NodeJS.Timeout | undefined;
  /** A question is on its way. */
  #asking = false;
  #closed = false;

  constructor(states: LinkStates, probe?: () => Promise<unknown>) {
    this.#states = states;
    this.#probe = probe;
  }

  /** The client lost the cluster and retries on its own: `reconnecting`, until it is back. */
  down(reason: string): void {
    if (this.#closed || this.#state === "failed" || this.#state === "lost") return;
    this.#report("reconnecting", reason);
  }

  /**
   * The cluster refused the client's login: `lost`, since retrying does not fix a credential; back
   * to `connected` if it is let in later (the probe answers, a signal of its own says so).
   */
  refused(reason: string): void {
    if (this.#closed || this.#state === "failed") return;
    this.#report("lost", reason);
  }

  /** The client gave up for good (a fatal error, a crash it does not restart from): `lost`. */
  failed(reason: string): void {
    if (this.#closed) return;
    this.#state = "failed";
    this.#pause();
    this.#states.report(this, { state: "lost", reason });
  }

  /** The client is back (its own signal, or the probe answered). */
  back(): void {
    if (this.#closed || this.#state === "failed" || this.#state === "connected") return;
    this.#state = "connected";
    this.#pause();
    this.#states.report(this, { state: "connected" });
  }

  /** The client closed on purpose: it counts no more, and the probe stops. */
  close(): void {
    this.#closed = true;
    this.#pause();
    this.#states.forget(this);
  }

  #report(state: "reconnecting" | "lost", reason: string): void {
    this.#state = state;
    this.#states.report(this, { state, reason });
    this.#schedule();
  }

  #pause(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#probe === undefined || this.#timer !== undefined || this.#asking) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#ask();
    }, PROBE_EVERY_MS);
    this.#timer.unref();
  }

  async #ask(): Promise<void> {
    let answered = false;
    this.#asking = true;
    try {
      await this.#probe?.();
      answered = true;
    } catch {
      // Still away: asked again after the pause.
    } finally {
      this.#asking = false;
    }
    if (answered) this.back();
    else if (!this.#closed && (this.#state === "reconnecting" || this.#state === "lost")) {
      this.#schedule();
    }
  }
}

/** `handle` whose close also ends `watched`: a client closed on purpose counts no more. */
export function closingWatch<T extends { close(): Promise<void> }>(
  handle: T,
  watched: { close(): void },
): T {
  const close = handle.close.bind(handle);
  handle.close = async () => {
    watched.close();
    await close();
  };
  return handle;
}
