import { Counter, Gauge, type Registry } from "prom-client";
import { type BacklogReading, backlogStates } from "./backlogReading.js";
import { TalliedHistogram } from "./talliedHistogram.js";
import {
  connectionStates,
  durationBuckets,
  settledKinds,
  type Tally,
  waitBuckets,
} from "./tally.js";

/**
 * The series' names: RustStream's where it has one (the first three), ours beside them with the same
 * prefix, so a dashboard built for RustStream services reads ours unchanged.
 */
export const metricNames = {
  consumed: "ruststream_messages_consumed_total",
  consumeDuration: "ruststream_consume_duration_seconds",
  published: "ruststream_messages_published_total",
  settled: "ruststream_messages_settled_total",
  inFlight: "ruststream_messages_in_flight",
  decodeFailures: "ruststream_decode_failures_total",
  redeliveries: "ruststream_redeliveries_total",
  deadLetters: "ruststream_dead_letters_total",
  brokerConnected: "ruststream_broker_connected",
  brokerConnectionState: "ruststream_broker_connection_state",
  backgroundFailures: "ruststream_background_failures_total",
  backgroundFailing: "ruststream_background_failing",
  backlog: "ruststream_backlog",
  backlogFailures: "ruststream_backlog_failures_total",
  wait: "ruststream_wait_seconds",
} as const;

/**
 * Registers every series on `registry`, each reading the tally when scraped: counters and gauges are
 * set from it in their `collect()`, the histogram answers from it directly.
 */
export function registerSeries(registry: Registry, tally: Tally, backlog: BacklogReading): void {
  const registers = [registry];
  const subscribers = () => tally.subscribers.values();
  new Counter({
    name: metricNames.consumed,
    help: "Messages a subscriber consumed, by how they ended: ack (handled and done) or nack (retried, dropped, dead-lettered, left open).",
    labelNames: ["name", "status"],
    registers,
    collect() {
      this.reset();
      for (const t of subscribers()) {
        this.inc({ name: t.name, status: "ack" }, t.ack);
        this.inc({ name: t.name, status: "nack" }, t.nack);
      }
    },
  });
  new TalliedHistogram(
    {
      name: metricNames.consumeDuration,
      help: "How long a subscriber's handler took, from its start to the delivery's settle, in seconds.",
      bounds: durationBuckets,
      of: (t) => t.duration,
    },
    tally,
    registry,
  );
  new TalliedHistogram(
    {
      name: metricNames.wait,
      help: "How long a message waited from its due time to its claim by a subscriber, in seconds, where its broker tells it (a PostgreSQL queue row's run time to its claim).",
      bounds: waitBuckets,
      of: (t) => t.wait,
    },
    tally,
    registry,
  );
  new Counter({
    name: metricNames.published,
    help: "Messages published, by destination, and whether the broker confirmed them (ok) or not (error).",
    labelNames: ["name", "status"],
    registers,
    collect() {
      this.reset();
      for (const [name, t] of tally.published) {
        this.inc({ name, status: "ok" }, t.ok);
        this.inc({ name, status: "error" }, t.error);
      }
    },
  });
  new Counter({
    name: metricNames.settled,
    help: "Messages a subscriber consumed, by the outcome that settled them.",
    labelNames: ["name", "outcome"],
    registers,
    collect() {
      this.reset();
      for (const t of subscribers()) {
        for (let i = 0; i < settledKinds.length; i++) {
          this.inc({ name: t.name, outcome: settledKinds[i]! }, t.settled[i]!);
        }
      }
    },
  });
  new Gauge({
    name: metricNames.inFlight,
    help: "Deliveries in a subscriber's handler now: started and not yet settled.",
    labelNames: ["name"],
    registers,
    collect() {
      this.reset();
      for (const t of subscribers()) this.set({ name: t.name }, t.inFlight());
    },
  });
  new Counter({
    name: metricNames.decodeFailures,
    help: "Deliveries whose payload did not decode, or that the subscriber's schema rejected.",
    labelNames: ["name"],
    registers,
    collect() {
      this.reset();
      for (const t of subscribers()) this.inc({ name: t.name }, t.decodeFailures);
    },
  });
  new Counter({
    name: metricNames.redeliveries,
    help: "Deliveries that were a message's second attempt or later (a requeue, a retry copy, a redelivery after a crash).",
    labelNames: ["name"],
    registers,
    collect() {
      this.reset();
      for (const t of subscribers()) this.inc({ name: t.name }, t.redeliveries);
    },
  });
  new Counter({
    name: metricNames.deadLetters,
    help: "Messages a subscriber sent to a dead letter, whether the runtime published the copy or the broker moved it.",
    labelNames: ["name", "destination"],
    registers,
    collect() {
      this.reset();
      for (const t of subscribers()) {
        for (const [destination, count] of t.deadLetters) {
          this.inc({ name: t.name, destination }, count);
        }
      }
    },
  });
  new Counter({
    name: metricNames.backgroundFailures,
    help: "Failures of work beside the handlers, outside any delivery, by its source (an outbox relay's failed claim: outbox:<label>).",
    labelNames: ["source"],
    registers,
    collect() {
      this.reset();
      for (const [source, count] of tally.backgroundFailures) this.inc({ source }, count);
    },
  });
  new Gauge({
    name: metricNames.backgroundFailing,
    help: "1 while work beside the handlers is failing (a failure reported, no recovery since), 0 once it recovered, by its source.",
    labelNames: ["source"],
    registers,
    collect() {
      this.reset();
      for (const [source, failing] of tally.backgroundFailing)
        this.set({ source }, failing ? 1 : 0);
    },
  });
  // The backlog gauge reads the brokers at the scrape; its failure counter, registered after it,
  // waits for that reading, so a failure shows in the scrape it happened in.
  new Gauge({
    name: metricNames.backlog,
    help: "Messages waiting in a subscriber's source, by state (ready, scheduled, leased, dead-lettered), as its broker answers at the scrape; no sample where the broker has no backlog to tell.",
    labelNames: ["name", "state"],
    registers,
    async collect() {
      this.reset();
      for (const { name, counts } of await backlog.read()) {
        for (const state of backlogStates) {
          const count = counts[state];
          if (count !== undefined) this.set({ name, state }, count);
        }
      }
    },
  });
  new Counter({
    name: metricNames.backlogFailures,
    help: "Scrapes where a subscriber's broker did not answer its backlog in time (timeout) or failed to (error): that scrape has no backlog sample for it.",
    labelNames: ["name", "reason"],
    registers,
    async collect() {
      await backlog.settled();
      this.reset();
      for (const { name, reason, count } of tally.backlogFailures.values()) {
        this.inc({ name, reason }, count);
      }
    },
  });
  new Gauge({
    name: metricNames.brokerConnected,
    help: "1 while the app's connection to the broker is connected, 0 while it reconnects, is lost or is shut down.",
    labelNames: ["broker"],
    registers,
    collect() {
      this.reset();
      for (const [broker, state] of tally.brokers) {
        this.set({ broker }, state === "connected" ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: metricNames.brokerConnectionState,
    help: "The state of the app's connection to the broker: 1 on the state it is in (connected, reconnecting, lost, closed), 0 on the others.",
    labelNames: ["broker", "state"],
    registers,
    collect() {
      this.reset();
      for (const [broker, now] of tally.brokers) {
        for (const state of connectionStates) this.set({ broker, state }, state === now ? 1 : 0);
      }
    },
  });
}
