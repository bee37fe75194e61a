import type { Coordinator } from "@ruststream/core/broker";
import type { LinkDelivery, StreamBounds } from "../link.js";
import type { QueueSpec, TableValue } from "../topology/topology.js";
import { heldNothing, type QueueHost, type StandInConsumer } from "./standInQueue.js";
import type { StoredMessage } from "./storedMessage.js";

/** One consumer of a stand-in stream: where it reads next, and what it holds against its credit. */
interface StreamReader {
  readonly consumer: StandInConsumer;
  /** The index in the log it reads next. */
  next: number;
  /** Handed out and not settled: the coordinator that counted each, released at its settle. */
  readonly held: Map<StoredMessage, Coordinator>;
}

/**
 * A stream queue as the server keeps one over AMQP: an append-only log (offsets from 0, kept: the
 * stand-in applies no retention) every consumer reads from its own offset, given at consume as
 * `x-stream-offset` (`first`, `last`, `next`, an offset, or a timestamp in seconds); each delivery
 * carries its offset in the `x-stream-offset` header. The prefetch is the consumer's credit: an ack
 * or a reject gives it back, and neither changes the log (a stream cannot requeue or dead-letter).
 * A closed consumer's deliveries are not returned: a new consumer reads from where it says. `last`
 * starts at the last message (the server starts at the last chunk, which the stand-in's messages
 * each are).
 */
export class StandInStream {
  readonly spec: QueueSpec;
  readonly #host: QueueHost;
  readonly #log: { readonly message: StoredMessage; readonly at: number }[] = [];
  readonly #readers = new Map<StandInConsumer, StreamReader>();

  constructor(spec: QueueSpec, host: QueueHost) {
    this.spec = spec;
    this.#host = host;
  }

  get name(): string {
    return this.spec.name;
  }

  get bounds(): StreamBounds {
    return { first: 0n, next: BigInt(this.#log.length) };
  }

  enqueue(message: StoredMessage): void {
    // Wall-clock time, as the node stamps a chunk: a seek by time names a date.
    this.#log.push({ message, at: Date.now() });
    for (const reader of this.#readers.values()) this.#dispatch(reader);
  }

  addConsumer(consumer: StandInConsumer, offset: TableValue | undefined): void {
    const reader: StreamReader = { consumer, next: this.#start(offset), held: new Map() };
    this.#readers.set(consumer, reader);
    this.#dispatch(reader);
  }

  /** The consumer is gone: what it held is released, and stays in the log. */
  removeConsumer(consumer: StandInConsumer): void {
    consumer.open = false;
    const reader = this.#readers.get(consumer);
    if (reader === undefined) return;
    this.#readers.delete(consumer);
    for (const counter of reader.held.values()) counter.consumed();
    reader.held.clear();
    consumer.unacked.clear();
  }

  /** An ack or a reject: the credit comes back; the message stays in the log. */
  settle(consumer: StandInConsumer, message: StoredMessage): void {
    const reader = this.#readers.get(consumer);
    if (reader === undefined || !consumer.unacked.delete(message)) return;
    reader.held.get(message)?.consumed();
    reader.held.delete(message);
    this.#dispatch(reader);
    heldNothing(consumer);
  }

  /** Where a consumer with `x-stream-offset` `offset` starts, as an index in the log. */
  #start(offset: TableValue | undefined): number {
    const end = this.#log.length;
    if (offset === undefined || offset === "next") return end;
    if (offset === "first") return 0;
    if (offset === "last") return Math.max(0, end - 1);
    if (typeof offset === "number") return Math.min(Math.max(0, offset), end);
    const stamp = offset as { readonly "!"?: unknown; readonly value?: unknown };
    if (stamp["!"] === "timestamp" && typeof stamp.value === "number") {
      const since = stamp.value * 1000;
      const at = this.#log.findIndex((entry) => entry.at >= since);
      return at < 0 ? end : at;
    }
    throw new Error(`x-stream-offset ${JSON.stringify(offset)}: the server refuses it`);
  }

  /** Hands the reader what its credit allows, each delivery in its own task. */
  #dispatch(reader: StreamReader): void {
    const consumer = reader.consumer;
    while (
      reader.next < this.#log.length &&
      consumer.drained === undefined &&
      consumer.unacked.size < consumer.prefetch
    ) {
      const offset = reader.next++;
      const { message } = this.#log[offset]!;
      consumer.unacked.add(message);
      const counter = this.#host.coordinator;
      counter.enqueued();
      reader.held.set(message, counter);
      const delivery = this.#delivery(consumer, message, offset);
      queueMicrotask(() => {
        if (consumer.open) consumer.deliver(delivery);
      });
    }
  }

  #delivery(consumer: StandInConsumer, message: StoredMessage, offset: number): LinkDelivery {
    const settle = () => {
      if (!consumer.open || !consumer.unacked.has(message)) {
        throw new Error(
          `a delivery of stream "${this.name}" was settled after its consumer closed or twice (the server closes the channel: PRECONDITION_FAILED - unknown delivery tag)`,
        );
      }
      this.settle(consumer, message);
    };
    return {
      queue: this.name,
      exchange: message.exchange,
      routingKey: message.routingKey,
      content: message.content,
      properties: {
        ...message.properties,
        headers: { ...message.properties.headers, "x-stream-offset": offset },
      },
      redelivered: false,
      ack: settle,
      reject: settle,
    };
  }
}
