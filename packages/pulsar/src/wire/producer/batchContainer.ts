// The batches a producer is filling: messages sent close together wait here, one batch at a time
// (or one per key, for Key_Shared), until the batch is full or its delay is over, and then go as one
// broker entry.

import type { Reject, Resolve, Waiters } from "./pendingSends.js";
import type { OutgoingMessage } from "./producerOptions.js";

/** A batch being filled: its messages, and who waits for each one's receipt. */
export class Batch implements Waiters {
  readonly messages: OutgoingMessage[] = [];
  readonly resolves: Resolve[] = [];
  readonly rejects: Reject[] = [];
  bytes = 0;
}

/** The limits a batch is filled to (BatchingOptions with their defaults applied). */
export interface BatchLimits {
  readonly maxMessages: number;
  readonly maxBytes: number;
  readonly maxDelayMs: number;
  readonly keyBased: boolean;
}

/** The batch a message goes in: "" for all, or its key's (the ordering key first) when key-based. */
function batchKey(message: OutgoingMessage): string {
  if (message.orderingKey !== undefined)
    return `o:${Buffer.from(message.orderingKey).toString("base64")}`;
  return message.key === undefined ? "" : `k:${message.key}`;
}

export class BatchContainer {
  readonly #batches = new Map<string, Batch>();
  #timer: NodeJS.Timeout | undefined;
  /** Sends a full or expired batch; `key` is "" unless batches are key-based. */
  readonly #send: (batch: Batch, key: string) => void;

  constructor(
    readonly limits: BatchLimits,
    send: (batch: Batch, key: string) => void,
  ) {
    this.#send = send;
  }

  /** Adds a message; its batch goes once full, or `maxDelayMs` after the oldest open batch began. */
  add(message: OutgoingMessage, resolve: Resolve, reject: Reject, maxMessageSize: number): void {
    const limits = this.limits;
    const key = limits.keyBased ? batchKey(message) : "";
    let batch = this.#batches.get(key);
    const size = message.payload.length;
    if (
      batch &&
      (batch.messages.length >= limits.maxMessages ||
        batch.bytes + size > Math.min(limits.maxBytes, maxMessageSize))
    ) {
      this.#batches.delete(key);
      this.#send(batch, key);
      batch = undefined;
    }
    if (!batch) {
      batch = new Batch();
      this.#batches.set(key, batch);
    }
    batch.messages.push(message);
    batch.resolves.push(resolve);
    batch.rejects.push(reject);
    batch.bytes += size;
    if (batch.messages.length >= limits.maxMessages) {
      this.#batches.delete(key);
      this.#send(batch, key);
    }
    if (this.#batches.size > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.flush();
      }, limits.maxDelayMs);
    }
  }

  /** Sends every open batch now (in the order their first messages came). */
  flush(): void {
    this.stop();
    const batches = [...this.#batches];
    this.#batches.clear();
    for (const [key, batch] of batches) this.#send(batch, key);
  }

  /** Stops the delay timer (open batches stay until the next flush). */
  stop(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}
