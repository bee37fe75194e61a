import type { ChannelModel } from "amqplib";

/** A channel of the link's that it may find closed under it (a reconnect, a channel error). */
export interface ClosableChannel {
  readonly closed: boolean;
  close(): Promise<void>;
}

/**
 * One of the link's long-lived channels (the publishing one, the transactional one): opened on first
 * use, and again once the one held closed. The link asks for it on its live connection.
 */
export class ChannelSlot<T extends ClosableChannel> {
  readonly #open: (model: ChannelModel) => Promise<T>;
  #current: Promise<T> | undefined;
  /** The channel `#current` resolved to, once it has: what `held` answers without a wait. */
  #settled: T | undefined;

  constructor(open: (model: ChannelModel) => Promise<T>) {
    this.#open = open;
  }

  /** The channel held, or one opening on `model`; `undefined` when it closed (ask again). */
  async on(model: ChannelModel): Promise<T | undefined> {
    this.#current ??= this.#open(model);
    const opened = this.#current;
    try {
      const channel = await opened;
      if (this.#current === opened) this.#settled = channel;
      if (!channel.closed) return channel;
    } catch (error) {
      if (this.#current === opened) this.#current = undefined;
      throw error;
    }
    if (this.#current === opened) {
      this.#current = undefined;
      this.#settled = undefined;
    }
    return undefined;
  }

  /**
   * The channel held, when it is open and `on` has seen it opened: what `on` would answer, without
   * the promises (a publish asks for it every time).
   */
  held(): T | undefined {
    const channel = this.#settled;
    return channel === undefined || channel.closed ? undefined : channel;
  }

  /** Lets go of the channel held (its connection closed): the next use opens another. */
  forget(): void {
    this.#current = undefined;
    this.#settled = undefined;
  }

  /** Closes the channel held, if any; the next use opens another. */
  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    this.#settled = undefined;
    await current?.then((c) => c.close()).catch(() => {});
  }
}
