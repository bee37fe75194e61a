import { Buffer } from "node:buffer";
import type { AppDescription, Delivery, OutcomeEvent, RuntimeEvent } from "@ruststream/core";

/** Counts by message: a subscriber's name, then the message's payload. */
type Tally = Map<string, Map<string, number>>;

/**
 * What a live app still owes: for each of its subscribers, the messages it has yet to settle for
 * good, from what the app published and settled. The in-process coordinator counts what its
 * transport enqueued and what was settled; against a real server nothing counts the enqueues, so
 * this counts their cause. A message the app published (a test's `publish`, a request, a reply, a
 * `ctx.out` publish, a dead letter) to a name one of its subscribers reads, on the broker that
 * subscriber is on, is owed a final outcome there. An immediate retry keeps it owed, whether the
 * message comes back by a requeue or as a copy (whose publish is not counted again), until its last
 * delivery settles it or its broker moves it to a dead letter. A delayed retry is parked, as the
 * in-process clock holds it: owed again when it comes back.
 *
 * Messages are told apart by their payload, not by arrival order: a request's publish is reported
 * once its reply came, after the handler that replied settled it, and an outcome that comes before
 * its publish is held against that publish. A message published by something else (another service,
 * a raw client) is owed nothing and settles nothing the app owes, so a test that feeds the app from
 * outside waits for the outcome it counts.
 */
export class LiveLedger {
  readonly #description: AppDescription;
  /** Broker labels in connection order: the n-th to connect is the n-th registered. */
  readonly #labels: string[] = [];
  /** Subscribers by the label of their broker, each with the name it reads. */
  readonly #readers = new Map<string, { subscriber: string; name: string }[]>();
  readonly #brokerOf = new Map<string, string>();
  readonly #owed: Tally = new Map();
  /** Outcomes of messages whose publish has not been reported (yet, or ever: from outside). */
  readonly #early: Tally = new Map();
  /** Delayed retries: owed again only when they come back. */
  readonly #parked: Tally = new Map();
  /** Deliveries settled as a retry, which a broker-moved dead letter then ends. */
  readonly #retried = new WeakSet<Delivery>();
  /** Deliveries the broker moves to a dead letter on the settle, reported before their outcome. */
  readonly #moved = new WeakSet<Delivery>();

  constructor(description: AppDescription) {
    this.#description = description;
  }

  /** An observer of the running app: every event passes through here. */
  observe(event: RuntimeEvent): void {
    switch (event.type) {
      case "broker-connection":
        if (event.connected) this.#connected(event.broker);
        return;
      case "publish":
        // A retry copy is the same message coming back, owed already; a dead letter was owed when
        // it was decided (below), and is owed no more if its publish failed.
        if (event.purpose === "dead-letter") {
          if (!event.ok) this.#forgive(event.broker, event.name, event.message.payload);
        } else if (event.ok && event.purpose !== "retry-copy") {
          this.#owe(event.broker, event.name, event.message.payload);
        }
        return;
      case "outcome":
        this.#outcome(event);
        return;
      case "dead-letter": {
        // Reported as it is decided, before the delivery's outcome: owed from here on, whoever
        // moves it (the runtime's publish confirms later; a broker's move reports nothing more).
        const { subscriber, delivery } = event;
        this.#owe(this.#brokerOf.get(subscriber), event.destination, delivery.payload);
        if (event.movedBy === "runtime") return;
        // The broker moves what was settled as a retry at its cap: that retry does not come back.
        const k = key(delivery.payload);
        if (!this.#retried.has(delivery)) this.#moved.add(delivery);
        else if (!take(this.#owed, subscriber, k)) take(this.#parked, subscriber, k);
        return;
      }
      default:
        return;
    }
  }

  /** How many messages are still owed, over every subscriber. */
  get outstanding(): number {
    let total = 0;
    for (const byPayload of this.#owed.values()) for (const n of byPayload.values()) total += n;
    return total;
  }

  /** Who still owes how many, for a timeout's message: `orders: 2, receipts: 1`. */
  describeOutstanding(): string {
    const parts: string[] = [];
    for (const [subscriber, byPayload] of this.#owed) {
      let n = 0;
      for (const count of byPayload.values()) n += count;
      if (n > 0) parts.push(`${subscriber}: ${n}`);
    }
    return parts.join(", ");
  }

  #connected(label: string): void {
    const broker = this.#description.brokers[this.#labels.length];
    this.#labels.push(label);
    const readers = (broker?.subscribers ?? []).map((s) => ({
      subscriber: s.name,
      name: s.source.name,
    }));
    this.#readers.set(label, readers);
    for (const reader of readers) this.#brokerOf.set(reader.subscriber, label);
  }

  #owe(label: string | undefined, name: string, payload: Uint8Array): void {
    if (label === undefined) return;
    for (const reader of this.#readers.get(label) ?? []) {
      if (reader.name !== name) continue;
      // An outcome that came first is this publish's.
      if (!take(this.#early, reader.subscriber, key(payload))) {
        add(this.#owed, reader.subscriber, key(payload));
      }
    }
  }

  /** A message owed that will never come: a dead letter whose publish failed. */
  #forgive(label: string, name: string, payload: Uint8Array): void {
    for (const reader of this.#readers.get(label) ?? []) {
      if (reader.name === name) take(this.#owed, reader.subscriber, key(payload));
    }
  }

  /**
   * A delivery's outcome settles what was owed for it (or parked, when it is a delayed retry coming
   * back), or, when its publish has not been reported, is held against that publish. Then an
   * immediate retry is owed again, and a delayed one parked: like the in-process clock, real time
   * holds it, so a test moves on (`advance` waits it out) rather than wait for it here.
   */
  #outcome(event: OutcomeEvent): void {
    const { subscriber, delivery, outcome } = event;
    const k = key(delivery.payload);
    if (!take(this.#parked, subscriber, k) && !take(this.#owed, subscriber, k)) {
      add(this.#early, subscriber, k);
    }
    if (this.#moved.has(delivery)) return;
    if (outcome === "retry") {
      this.#retried.add(delivery);
      add(this.#owed, subscriber, k);
    } else if (outcome === "retry-after") {
      this.#retried.add(delivery);
      add(this.#parked, subscriber, k);
    }
  }
}

function key(payload: Uint8Array): string {
  return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("base64");
}

function add(tally: Tally, subscriber: string, k: string): void {
  const byPayload = tally.get(subscriber) ?? new Map<string, number>();
  tally.set(subscriber, byPayload);
  byPayload.set(k, (byPayload.get(k) ?? 0) + 1);
}

/** Takes one count of `k` from `subscriber`; false when there was none. */
function take(tally: Tally, subscriber: string, k: string): boolean {
  const byPayload = tally.get(subscriber);
  const n = byPayload?.get(k) ?? 0;
  if (n === 0) return false;
  if (n === 1) byPayload!.delete(k);
  else byPayload!.set(k, n - 1);
  return true;
}
