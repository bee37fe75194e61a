import type { BacklogCounts, ConnectionState, RuntimeEvent, SettledAs } from "@ruststream/core";
import { Buckets } from "./buckets.js";
import { consumeStatus } from "./status.js";

/** The handling-time buckets, in seconds: 0.5 ms to 5 s, as RustStream's histogram has them. */
export const durationBuckets: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/**
 * The wait buckets, in seconds, from a message's due time to its claim: 1 ms to 5 minutes, as a
 * queue's backlog can hold a message that long.
 */
export const waitBuckets: readonly number[] = [
  0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300,
];

/** Every way a delivery can be settled, in the order the settled series lists them. */
export const settledKinds: readonly SettledAs[] = [
  "ack",
  "retry",
  "retry-after",
  "drop",
  "dead-letter",
  "settled-by-handler",
  "left-open",
];
const settledIndex = new Map<SettledAs, number>(settledKinds.map((kind, i) => [kind, i]));

/**
 * One subscriber's counts, kept as plain numbers: the observer runs on the dispatch path, where a
 * prom-client `inc()` or `observe()` (which hashes and checks its labels on every call) would cost
 * more than the handling it measures. The series read these at scrape time.
 */
export class SubscriberTally {
  readonly name: string;
  ack = 0;
  nack = 0;
  readonly settled: number[] = settledKinds.map(() => 0);
  /** The runtime's own count of deliveries in the handler, read when scraped. */
  inFlight: () => number = () => 0;
  /** The broker's answer to its source's backlog, while its subscription runs and it has one. */
  backlog: (() => Promise<BacklogCounts>) | undefined;
  decodeFailures = 0;
  redeliveries = 0;
  /** Handling times, in seconds. */
  readonly duration = new Buckets(durationBuckets);
  /** Waits from due to claim, in seconds, once its broker reported one (none before: no sample). */
  wait: Buckets | undefined;
  readonly deadLetters = new Map<string, number>();

  constructor(name: string) {
    this.name = name;
  }

  settle(outcome: SettledAs, failed: boolean): void {
    this.settled[settledIndex.get(outcome)!]!++;
    if (consumeStatus(outcome, failed) === "ack") this.ack++;
    else this.nack++;
  }
}

/** Every state a broker connection can be in, in the order the connection-state series lists them. */
export const connectionStates: readonly ConnectionState[] = [
  "connected",
  "reconnecting",
  "lost",
  "closed",
];

/** A destination's publishes. */
export interface PublishTally {
  ok: number;
  error: number;
}

/** Why a subscriber's backlog gave no sample at a scrape. */
export type BacklogFailure = "timeout" | "error";

/** A subscriber's backlog readings that gave no sample, by why. */
export interface BacklogFailureTally {
  readonly name: string;
  readonly reason: BacklogFailure;
  count: number;
}

/** Everything the metrics count, fed by the app's runtime events. */
export class Tally {
  readonly subscribers = new Map<string, SubscriberTally>();
  readonly published = new Map<string, PublishTally>();
  /** Each broker connection's state, by the name the runtime gives it (`redis`, `redis-2`). */
  readonly brokers = new Map<string, ConnectionState>();
  /** Failures of work beside the handlers, by its source (`outbox:<label>`). */
  readonly backgroundFailures = new Map<string, number>();
  /** Whether each source that ever failed is failing now (no recovery since its last failure). */
  readonly backgroundFailing = new Map<string, boolean>();
  /** Backlog readings that failed or timed out, by subscriber and reason. */
  readonly backlogFailures = new Map<string, BacklogFailureTally>();
  #last: SubscriberTally | undefined;

  /** The observer: one switch, a map lookup (skipped for a run of one subscriber's events), sums. */
  readonly observe = (event: RuntimeEvent): void => {
    switch (event.type) {
      case "outcome": {
        const tally = this.subscriber(event.subscriber);
        if (event.handled) tally.duration.observe(event.durationMs / 1000);
        tally.settle(event.outcome, event.error !== undefined);
        if (event.attempt > 1) tally.redeliveries++;
        return;
      }
      case "publish": {
        let tally = this.published.get(event.name);
        if (tally === undefined) {
          tally = { ok: 0, error: 0 };
          this.published.set(event.name, tally);
        }
        if (event.ok) tally.ok++;
        else tally.error++;
        return;
      }
      case "wait": {
        const tally = this.subscriber(event.subscriber);
        tally.wait ??= new Buckets(waitBuckets);
        tally.wait.observe(event.waitedMs / 1000);
        return;
      }
      case "decode-failure":
        this.subscriber(event.subscriber).decodeFailures++;
        return;
      case "dead-letter": {
        const counts = this.subscriber(event.subscriber).deadLetters;
        counts.set(event.destination, (counts.get(event.destination) ?? 0) + 1);
        return;
      }
      case "subscription": {
        // Every subscriber's series exist from its start, at zero, not from its first message.
        const tally = this.subscriber(event.subscriber);
        tally.inFlight = event.inFlight;
        // Asked only while the subscription runs: an ended one has no backlog to read.
        tally.backlog = event.state === "started" ? event.backlog : undefined;
        return;
      }
      case "broker-connection":
        this.brokers.set(event.broker, event.state);
        return;
      case "background-failure":
        // By its source, not as a subscriber: the work is none, and has no consumer series.
        this.backgroundFailures.set(
          event.source,
          (this.backgroundFailures.get(event.source) ?? 0) + 1,
        );
        this.backgroundFailing.set(event.source, true);
        return;
      case "background-recovered":
        this.backgroundFailing.set(event.source, false);
        return;
      case "app-state":
        // A stopping app closes its subscriptions: their backlog is not read past that.
        if (event.state === "stopping") {
          for (const tally of this.subscribers.values()) tally.backlog = undefined;
        }
        // A new run: a failure the last one left is none of its (nothing will report its end).
        if (event.state === "starting") {
          for (const source of this.backgroundFailing.keys()) {
            this.backgroundFailing.set(source, false);
          }
        }
        return;
    }
  };

  subscriber(name: string): SubscriberTally {
    const last = this.#last;
    if (last !== undefined && last.name === name) return last;
    let tally = this.subscribers.get(name);
    if (tally === undefined) {
      tally = new SubscriberTally(name);
      this.subscribers.set(name, tally);
    }
    this.#last = tally;
    return tally;
  }
}
