import { RustStreamError } from "@ruststream/core";
import type { Link, LinkConsumer } from "../link/link.js";
import type { PulsarSource } from "../sources.js";
import type { ConsumerOptions } from "../wire/consumer/consumerOptions.js";
import type { UndecodableHandler } from "../wire/undecodable.js";
import { Reader } from "./reader.js";

/** A reader of an Exclusive subscription, shared by one connection's subscriptions to it. */
interface SharedReader {
  readonly reader: Promise<Reader>;
  refs: number;
}

/** A subscription's reader, and how it gives it back. */
export interface OpenedReader {
  readonly reader: Reader;
  readonly release: () => Promise<void>;
}

/** Opens the consumers subscriptions read, for one connection. */
export class Readers {
  readonly #link: Link;
  readonly #exclusive = new Map<string, SharedReader>();

  constructor(link: Link) {
    this.#link = link;
  }

  /**
   * The consumers of a subscription: its topic and, where it reads one, its retry topic. An
   * Exclusive subscription admits one consumer, so this connection's subscriptions to it share
   * one reader (messages go to whichever pulls), and the last to let go closes it. Entries its
   * consumers cannot decode go to `undecodable` (the dead letter) where one is given.
   */
  async open(
    descriptor: PulsarSource,
    subscription: string,
    retry: string | undefined,
    undecodable?: UndecodableHandler,
  ): Promise<OpenedReader> {
    if (descriptor.subscriptionType !== "Exclusive") {
      const reader = await this.#open(descriptor, subscription, retry, undecodable);
      return { reader, release: () => reader.close() };
    }
    const key = `${descriptor.topic}\u0000${subscription}`;
    let shared = this.#exclusive.get(key);
    if (shared === undefined) {
      const opening = this.#open(descriptor, subscription, retry, undecodable);
      shared = { reader: opening, refs: 0 };
      this.#exclusive.set(key, shared);
      const entry = shared;
      opening.catch(() => {
        if (this.#exclusive.get(key) === entry) this.#exclusive.delete(key);
      });
    }
    shared.refs++;
    const entry = shared;
    let reader: Reader;
    try {
      reader = await entry.reader;
    } catch (error) {
      entry.refs--;
      throw error;
    }
    let released = false;
    return {
      reader,
      release: async () => {
        if (released) return;
        released = true;
        if (--entry.refs > 0) return;
        if (this.#exclusive.get(key) === entry) this.#exclusive.delete(key);
        await reader.close();
      },
    };
  }

  async #open(
    descriptor: PulsarSource,
    subscription: string,
    retry: string | undefined,
    undecodable: UndecodableHandler | undefined,
  ): Promise<Reader> {
    const base: ConsumerOptions = {
      topic: descriptor.topic,
      subscription,
      subscriptionType: descriptor.subscriptionType,
      receiverQueueSize: descriptor.receiverQueueSize,
      ...(descriptor.consumerName === undefined ? {} : { consumerName: descriptor.consumerName }),
      ...(descriptor.subscriptionType === "Key_Shared"
        ? { keyShared: { allowOutOfOrderDelivery: descriptor.allowOutOfOrderDelivery } }
        : {}),
      ...(undecodable === undefined ? {} : { undecodable }),
    };
    const opened = await Promise.allSettled([
      this.#link.subscribe({
        ...base,
        initialPosition: descriptor.initialPosition,
      }),
      // Everything in the retry topic is for this subscription: read it from its start.
      retry === undefined
        ? Promise.resolve(undefined)
        : this.#link.subscribe({ ...base, topic: retry, initialPosition: "earliest" }),
    ]);
    const consumers = opened.flatMap((o) => (o.status === "fulfilled" && o.value ? [o.value] : []));
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (failed !== undefined) {
      await Promise.all(consumers.map((c) => c.close().catch(() => undefined)));
      throw failed.reason;
    }
    const [main, retryConsumer] = opened.map((o) =>
      o.status === "fulfilled" ? o.value : undefined,
    ) as [LinkConsumer, LinkConsumer | undefined];
    if (descriptor.partitions === true && main.partitions === 0) {
      await Promise.all(consumers.map((c) => c.close().catch(() => undefined)));
      throw new RustStreamError(
        "invalid-argument",
        `${descriptor.name} is declared partitioned, but the broker holds it as a non-partitioned topic: create it partitioned (pulsar-admin topics create-partitioned-topic) or drop partitioned from the descriptor`,
      );
    }
    return new Reader(main, retryConsumer);
  }
}
