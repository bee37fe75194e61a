import { type Broker, type Publisher, type RunningApp, RustStreamError } from "@ruststream/core";
import type { OutboxRelayOptions, RelayReports } from "./relay.js";

/** A relay in a running app: the relay's options, with the app's brokers in place of publishers. */
export interface OutboxAppRelayOptions extends Omit<OutboxRelayOptions, "targets"> {
  /**
   * The app's broker of each label the outbox writes for (`outbox.publish`'s
   * `destination.broker`): `{ kafka }` for `{ broker: "kafka", ... }`. Each must be registered with
   * the app (`app.broker(...)`).
   */
  readonly brokers: Readonly<Record<string, Broker>>;
}

/**
 * The relay's targets in a running app: for each label, the app's publisher of that broker
 * (`running.publisher`), so the relayed messages go through the app's publish middleware (a
 * tracing header) and are counted in its `publish` events (its metrics).
 */
export function appTargets(
  running: RunningApp,
  brokers: OutboxAppRelayOptions["brokers"],
): Record<string, Publisher<never>> {
  if (brokers === null || typeof brokers !== "object" || Object.keys(brokers).length === 0) {
    throw new RustStreamError(
      "invalid-argument",
      'outbox.relayIn(running, { brokers }) needs the app\'s broker per label, for example { brokers: { kafka } } for messages published to { broker: "kafka", name }',
    );
  }
  return Object.fromEntries(
    Object.entries(brokers).map(([label, broker]) => [
      label,
      running.publisher(broker) as Publisher<never>,
    ]),
  );
}

/**
 * The name a relay's label is counted under in the app's events: `outbox:<label>`, the subscriber
 * of its dead letters and the source of its failed claims.
 */
export function relaySubscriber(label: string): string {
  return `outbox:${label}`;
}

/**
 * A relay's reports in a running app, under `outbox:<label>`: each row moved to `<label>.dead` is
 * the app's `dead-letter` event (`running.reportDeadLetter`), moved by the broker (the outbox
 * table's settle), as a subscriber's would be; each failed claim, and each loss of the outbox
 * connection (`reconnecting`, `lost`), is its `background-failure` event
 * (`running.reportBackgroundFailure`), and their end its `background-recovered` event
 * (`running.reportBackgroundRecovered`). Its metrics count them, its health reads them.
 */
export function appReports(running: RunningApp): RelayReports {
  return {
    deadLettered: (label, delivery, destination, reason) =>
      running.reportDeadLetter({
        subscriber: relaySubscriber(label),
        delivery,
        destination,
        reason,
        movedBy: "broker",
      }),
    claimFailed: (label, error) =>
      running.reportBackgroundFailure({ source: relaySubscriber(label), error }),
    connectionLost: (label, error) =>
      running.reportBackgroundFailure({ source: relaySubscriber(label), error }),
    recovered: (label) => running.reportBackgroundRecovered({ source: relaySubscriber(label) }),
  };
}
