// How a producer or a consumer gets onto the broker that serves its topic, and back onto it after
// losing it (a topic unloaded or moved, CLOSE_PRODUCER or CLOSE_CONSUMER, a lost connection): look
// the topic up, take the pooled connection to that broker, send the handle's own command (PRODUCER,
// SUBSCRIBE), and take the result only if nothing closed the handle meanwhile. The first attach is
// retried within the client's operation timeout and its failure is the caller's; a reattach is
// retried with backoff until it succeeds, the handle is closed, or the broker refuses for good.
import { Backoff, sleep } from "./backoff.js";
import type { Connection } from "./connection.js";
import { closedWhileAttaching, isRetriable } from "./errors.js";
import type { ClientHost } from "./host.js";

/** A command the broker accepted, not yet taken. */
export interface Attachment {
  /** Takes it: the handle is attached through it. */
  commit(): void;
  /** Gives it up (the handle closed, or was closed by the broker, meanwhile): unregisters it. */
  release(): void;
}

/** The producer or consumer being attached. */
export interface AttachTarget {
  /** The topic, or the partition's name. */
  readonly topic: string;
  /** True once closed by its owner or failed for good: nothing attaches it again. */
  finished(): boolean;
  /**
   * Registers with `connection` and sends the handle's command; resolves once the broker accepted
   * it, and rejects (unregistered again) when the broker refuses or the request fails.
   */
  request(connection: Connection): Promise<Attachment>;
  /** Stops the handle for good: a reattach failed in a way retrying cannot fix. */
  fail(error: Error): void;
}

export class Attacher {
  /** True while an attach loop runs: a connection lost meanwhile is that loop's to retry. */
  #attaching = false;
  /**
   * Closes seen (by the broker, or of the connection). A CLOSE_PRODUCER or CLOSE_CONSUMER can
   * arrive in the same read as the answer to the command it follows (a topic unloaded again at
   * once): the attempt then sees the count move and attaches again, rather than take a handle the
   * broker already closed for attached.
   */
  #closes = 0;
  readonly #host: ClientHost;
  readonly #target: AttachTarget;
  /**
   * The broker's answer while it still counts the handle's previous incarnation, for a moment
   * after a disconnect (ProducerBusy, ConsumerBusy): retried on a reattach.
   */
  readonly #busy: number;

  constructor(host: ClientHost, target: AttachTarget, busy: number) {
    this.#host = host;
    this.#target = target;
    this.#busy = busy;
  }

  /**
   * The first attach, retried with backoff within the client's operation timeout; rejects (and
   * fails the target) when the broker refuses, the time is up or the client closes.
   */
  async start(): Promise<void> {
    const backoff = new Backoff(this.#host.backoff);
    const deadline = Date.now() + this.#host.operationTimeoutMs;
    this.#attaching = true;
    try {
      for (;;) {
        try {
          await this.#attempt();
          return;
        } catch (error) {
          const delay = backoff.next();
          if (!isRetriable(error) || Date.now() + delay > deadline || this.#host.signal.aborted) {
            this.#target.fail(asError(error));
            throw error;
          }
          await sleep(delay, this.#host.signal);
        }
      }
    } finally {
      this.#attaching = false;
    }
  }

  /**
   * The handle lost its attachment (the broker closed it, or the connection went): attaches again
   * in the background, after a backoff, until it is back, finished, or refused for good. The
   * client's state counts it `reconnecting` from the first failed attempt, or at once when the
   * connection went (`reason` says why), `connected` once it is back, and `lost` once refused.
   */
  lost(reason?: string): void {
    this.#closes++;
    if (this.#target.finished()) return;
    if (reason !== undefined) this.#report("reconnecting", reason);
    if (this.#attaching) return;
    this.#attaching = true;
    void (async () => {
      const backoff = new Backoff(this.#host.backoff);
      try {
        while (!this.#host.signal.aborted && !this.#target.finished()) {
          await sleep(backoff.next(), this.#host.signal);
          if (this.#target.finished() || this.#host.signal.aborted) return;
          try {
            await this.#attempt();
            this.#host.states.report(this, { state: "connected" });
            return;
          } catch (error) {
            if (!isRetriable(error, [this.#busy])) {
              this.#report("lost", `${this.#target.topic} was refused: ${asError(error).message}`);
              this.#target.fail(asError(error));
              return;
            }
            this.#report("reconnecting", asError(error).message);
          }
        }
      } finally {
        this.#attaching = false;
      }
    })();
  }

  /** The handle closed (its owner, or its client, closed it): its state counts no more. */
  close(): void {
    this.#host.states.forget(this);
  }

  #report(state: "reconnecting" | "lost", reason: string): void {
    this.#host.states.report(this, { state, reason });
  }

  async #attempt(): Promise<void> {
    const { logical, physical } = await this.#host.lookup(this.#target.topic);
    const connection = await this.#host.connection(logical, physical);
    const closesBefore = this.#closes;
    const attachment = await this.#target.request(connection);
    if (this.#target.finished()) {
      attachment.release();
      return;
    }
    if (this.#closes !== closesBefore) {
      attachment.release();
      throw closedWhileAttaching(this.#target.topic);
    }
    attachment.commit();
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
