import type { Clock } from "../clock.js";
import { hasMark, inProcessMark, testableMark } from "../marks.js";
import type { OutgoingMessage, RawMessage } from "../message.js";
import type { Broker, ConnectedBroker, ConnectOptions } from "./contract.js";

/**
 * What an in-process transport reports so a test harness knows when a reaction is over. The
 * transport calls `enqueued` for each delivery it makes available to a subscription, and `consumed`
 * exactly once when that delivery is settled for good (acked, dropped, dead-lettered) or abandoned.
 * A requeue keeps it counted; a delayed redelivery is released at the nack and counted again when due.
 *
 * The runtime reports the other delay, the one a broker cannot keep: it holds the delivery unsettled
 * until its retry copy is published after the delay, so a crash meanwhile leaves the message with the
 * broker. The transport still counts that delivery (it is not settled); the runtime calls `park`
 * when the hold begins and `unpark` when the delay is over, and a harness waits for neither in
 * between, as it waits for no delayed redelivery: its clock brings both back.
 */
export interface Coordinator {
  enqueued(count?: number): void;
  consumed(count?: number): void;
  park(): void;
  unpark(): void;
}

/** The coordinator of a connection no test harness counts for: every report goes nowhere. */
export const noCoordinator: Coordinator = Object.freeze({
  enqueued() {},
  consumed() {},
  park() {},
  unpark() {},
});

export interface InProcessOptions extends ConnectOptions {
  readonly coordinator: Coordinator;
  /** Drives the transport's timers (delayed redelivery, request timeouts). */
  readonly clock: Clock;
}

/**
 * A broker that can connect to an in-process transport of its own descriptors and policies, so a
 * test runs the production app unchanged. The in-process form reads every setting from the broker
 * (it has none of its own), settles exactly as the real server would (`unsupported` where the server
 * cannot), and refuses whatever the server would refuse.
 */
export interface InProcessBroker<TConnected extends ConnectedBroker = ConnectedBroker>
  extends Broker<TConnected> {
  readonly [inProcessMark]: true;
  connectInProcess(options: InProcessOptions): Promise<TConnected>;
}

/** Whether a subscription receives messages published before it opened. */
export type Backlog = "missed" | "delivered";

/** What a connected in-process transport exposes to a test harness. */
export interface TestableBroker {
  readonly [testableMark]: true;
  /** What a new subscription sees of earlier publishes. */
  readonly backlog: Backlog;
  /** Publishes as if from outside the process, synchronously and through normal routing. */
  inject(message: OutgoingMessage): void;
  /** Every message published to `name` through this connection, injections included, in order. */
  published(name: string): readonly RawMessage[];
}

export function supportsInProcess<TConnected extends ConnectedBroker>(
  broker: Broker<TConnected>,
): broker is InProcessBroker<TConnected> {
  return hasMark(broker, inProcessMark);
}

export function isTestableBroker(connected: object): connected is TestableBroker {
  return hasMark(connected, testableMark);
}
