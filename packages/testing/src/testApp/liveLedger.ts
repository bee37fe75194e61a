import { Buffer } from "node:buffer";
import type { AppDescription, Delivery, OutcomeEvent, RuntimeEvent } from "@ruststream/core";

/**
 * Where a message stands for one subscriber. `owed` and `parked` are messages the app published:
 * owed a final outcome, or parked in a delayed retry (owed again when it comes back). The `early`
 * states are messages whose outcome came with no publish known for it: a request's publish is
 * reported only once its reply came, after the handler that replied settled it, and a message
 * something else published (another service, a raw client) has no publish here at all.
 */
type State = "owed" | "parked" | "earlyFinal" | "earlyRetry" | "earlyParked";

/** Counts by state, then by subscriber and payload. */
type Tallies = Record<State, Map<string, Map<string, number>>>;

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
 * Messages are told apart by their payload, not by arrival order, so an outcome that comes before
 * its publish is held against that publish. A message the app did not publish is owed nothing, its
 * retries included: another consumer of a shared subscription may finish it, so a test that feeds
 * the app from outside waits for the outcome it counts.
 */
export class LiveLedger {
  readonly #description: AppDescription;
  /** Broker labels in connection order: the n-th to connect is the n-th registered. */
  readonly #labels: string[] = [];
  /** Subscribers by the label of their broker, each with the name it reads. */
  readonly #readers = new Map<string, { subscriber: string; name: string }[]>();
  readonly #brokerOf = new Map<string, string>();
  readonly #tallies: Tallies = {
    owed: new Map(),
    parked: new Map(),
    earlyFinal: new Map(),
    earlyRetry: new Map(),
    earlyParked: new Map(),
  };
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
        // The first event of a connection is the runtime's as it joins the app, in registration
        // order; later ones are its changes of state.
        if (!this.#readers.has(event.broker)) this.#connected(event.broker);
        return;
      case "publish":
        // A retry copy is the same message coming back, counted already; a dead letter was owed
        // when it was decided (below), and is owed no more if its publish failed.
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
        if (this.#retried.has(delivery)) this.#end(subscriber, key(delivery.payload));
        else this.#moved.add(delivery);
        return;
      }
      default:
        return;
    }
  }

  /** How many messages are still owed, over every subscriber. */
  get outstanding(): number {
    let total = 0;
    for (const byPayload of this.#tallies.owed.values()) {
      for (const n of byPayload.values()) total += n;
    }
    return total;
  }

  /** Who still owes how many, for a timeout's message: `orders: 2, receipts: 1`. */
  describeOutstanding(): string {
    const parts: string[] = [];
    for (const [subscriber, byPayload] of this.#tallies.owed) {
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

  /** A publish the app made: owed, unless its outcome came first (then where that left it). */
  #owe(label: string | undefined, name: string, payload: Uint8Array): void {
    if (label === undefined) return;
    const k = key(payload);
    for (const { subscriber, name: read } of this.#readers.get(label) ?? []) {
      if (read !== name) continue;
      if (this.#take("earlyFinal", subscriber, k)) continue;
      if (this.#take("earlyParked", subscriber, k)) this.#add("parked", subscriber, k);
      else {
        this.#take("earlyRetry", subscriber, k);
        this.#add("owed", subscriber, k);
      }
    }
  }

  /** A dead letter owed that will never come: its publish failed. */
  #forgive(label: string, name: string, payload: Uint8Array): void {
    for (const reader of this.#readers.get(label) ?? []) {
      if (reader.name === name) this.#take("owed", reader.subscriber, key(payload));
    }
  }

  /**
   * A delivery's outcome takes its message from where it stood (parked, owed, or an earlier outcome
   * of a message with no publish known), then puts it where the outcome leaves it: owed again after
   * an immediate retry, parked after a delayed one, nowhere when final. A message with no publish
   * known goes to the matching early state instead, owed nothing.
   */
  #outcome(event: OutcomeEvent): void {
    const { subscriber, delivery, outcome } = event;
    const k = key(delivery.payload);
    const known = this.#take("parked", subscriber, k) || this.#take("owed", subscriber, k);
    if (!known) {
      if (!this.#take("earlyRetry", subscriber, k)) this.#take("earlyParked", subscriber, k);
    }
    const moved = this.#moved.has(delivery);
    if (!moved && (outcome === "retry" || outcome === "retry-after")) {
      this.#retried.add(delivery);
      const immediate = outcome === "retry";
      if (known) this.#add(immediate ? "owed" : "parked", subscriber, k);
      else this.#add(immediate ? "earlyRetry" : "earlyParked", subscriber, k);
    } else if (!known) {
      this.#add("earlyFinal", subscriber, k);
    }
  }

  /** A retry the broker moved to its dead letter at its cap: it does not come back. */
  #end(subscriber: string, k: string): void {
    if (this.#take("owed", subscriber, k) || this.#take("parked", subscriber, k)) return;
    if (this.#take("earlyRetry", subscriber, k) || this.#take("earlyParked", subscriber, k)) {
      this.#add("earlyFinal", subscriber, k);
    }
  }

  #add(state: State, subscriber: string, k: string): void {
    const tally = this.#tallies[state];
    const byPayload = tally.get(subscriber) ?? new Map<string, number>();
    tally.set(subscriber, byPayload);
    byPayload.set(k, (byPayload.get(k) ?? 0) + 1);
  }

  /** Takes one message of payload `k` from `state`; false when there was none. */
  #take(state: State, subscriber: string, k: string): boolean {
    const byPayload = this.#tallies[state].get(subscriber);
    const n = byPayload?.get(k) ?? 0;
    if (n === 0) return false;
    if (n === 1) byPayload!.delete(k);
    else byPayload!.set(k, n - 1);
    return true;
  }
}

function key(payload: Uint8Array): string {
  return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("base64");
}
