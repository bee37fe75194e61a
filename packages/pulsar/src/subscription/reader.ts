import type { LinkConsumer, LinkMessage } from "../link/link.js";

/** A message and the topic of the subscription it came from. */
export interface Received {
  readonly message: LinkMessage;
  /** True when it came from the subscription's retry topic. */
  readonly retry: boolean;
}

/**
 * The consumers one subscription reads: its topic, and its retry topic where it reads one. Pulls
 * without waiting, alternating between the two so neither starves the other; the subscription
 * waits for `listen`'s call when both are empty.
 */
export class Reader {
  readonly main: LinkConsumer;
  readonly retry: LinkConsumer | undefined;
  #turn = 0;

  constructor(main: LinkConsumer, retry: LinkConsumer | undefined) {
    this.main = main;
    this.retry = retry;
  }

  tryReceive(): Received | undefined {
    const retry = this.retry;
    if (retry === undefined) {
      const message = this.main.tryReceive();
      return message === undefined ? undefined : { message, retry: false };
    }
    for (let i = 0; i < 2; i++) {
      const fromRetry = (this.#turn + i) % 2 === 1;
      const message = (fromRetry ? retry : this.main).tryReceive();
      if (message !== undefined) {
        this.#turn = (this.#turn + i + 1) % 2;
        return { message, retry: fromRetry };
      }
    }
    return undefined;
  }

  listen(onReadable: () => void): () => void {
    const undo = [this.main.listen(onReadable), this.retry?.listen(onReadable)];
    return () => {
      for (const u of undo) u?.();
    };
  }

  consumer(retry: boolean): LinkConsumer | undefined {
    return retry ? this.retry : this.main;
  }

  async close(): Promise<void> {
    await Promise.all([this.main.close(), this.retry?.close()]);
  }
}
