import type { Delivery } from "../delivery.js";
import type { Logger } from "../logger.js";
import { brokerMark } from "../marks.js";
import type { Publisher, PublishPolicy } from "../publisher.js";
import type { Source } from "../source.js";
import type { Subscription } from "../subscription.js";

/** An app's name and version: what a service is, to its brokers and its docs. */
export interface AppInfo {
  readonly name: string;
  readonly version: string;
}

/**
 * Where a broker connection is. `connected`: requests go through. `reconnecting`: the client lost
 * the server and retries on its own; requests wait or fail meanwhile. `lost`: the client gave up,
 * or keeps being refused for a reason retrying cannot fix (its credentials, for one): what each
 * broker counts as lost is in its README, and a restart (or a changed setting) is the cure.
 * `closed`: `shutdown()` was called.
 */
export type ConnectionState = "connected" | "reconnecting" | "lost" | "closed";

/** A connection's new state, with what the client said of it when it is `reconnecting` or `lost`. */
export interface ConnectionChange {
  readonly state: ConnectionState;
  /** The client's own words (the error it retries after, the refusal it gave up on). */
  readonly reason?: string;
}

/**
 * Hears every change of a connection's state, synchronously, from inside the broker's client: keep
 * it cheap and never throw (a throw is rethrown outside the client, as an uncaught exception).
 */
export type ConnectionListener = (change: ConnectionChange) => void;

/**
 * Hears a connection's work beside the handlers fail and work again, where no handler sees it (a
 * consumer the server no longer has, asked for again): `source` names the work, the same in its
 * failures and its recovery. Keep it cheap and never throw.
 */
export interface BackgroundListener {
  /** `source` failed with `error`; it counts as failing until `recovered(source)`. */
  failed(source: string, error: unknown): void;
  /** `source`, which failed, works again. */
  recovered(source: string): void;
}

/** What the connecting side tells a broker. */
export interface ConnectOptions {
  /**
   * The app the connection serves (an app always says, a script connecting by hand may not). A
   * broker derives from it what must be shared by the app's replicas and never invented per
   * process: a consumer group, for one (the Redis broker's defaults to the app's name).
   */
  readonly app?: AppInfo;
  /**
   * The app's logger, for what a broker handles on its own, outside any delivery the app sees (a
   * message it cannot decode, for one). A broker connected by hand logs to its own default.
   */
  readonly logger?: Logger;
  /**
   * Hears the connection's state change after `connect()` resolves: the client lost the server and
   * retries (`reconnecting`), is back (`connected`), gave up (`lost`), or `shutdown()` was called
   * (`closed`). An app passes its own, which emits the `broker-connection` event.
   */
  readonly onState?: ConnectionListener;
  /**
   * Hears the connection's work beside the handlers fail and recover. An app passes its own, which
   * emits the `background-failure` and `background-recovered` events (its health's readiness
   * reads them); a broker connected by hand logs them to its logger.
   */
  readonly onBackground?: BackgroundListener;
}

/**
 * A broker before it connects: its constructor only records configuration (no I/O, no timers), so
 * an app can be built and inspected synchronously and connected later.
 */
export interface Broker<TConnected extends ConnectedBroker = ConnectedBroker> {
  /** The broker's kind, for example `"memory"`. */
  readonly [brokerMark]: string;
  /** Connects; call it once per broker object. */
  connect(options?: ConnectOptions): Promise<TConnected>;
}

/**
 * A connected broker. After `shutdown()` this object stays reachable wherever it was kept, so every
 * method checks: a subscribe, a pairing, a publish through any publisher it made, a settle and a seek
 * all reject with code `closed`.
 */
export interface ConnectedBroker<
  TSource extends Source = Source,
  TDelivery extends Delivery = Delivery,
  TPublisher extends Publisher<never> = Publisher<never>,
  TClosed extends ClosedBroker = ClosedBroker,
> {
  readonly [brokerMark]: string;
  /** Where the connection is now: `connected` until the client loses the server or it shuts down. */
  readonly state: ConnectionState;
  /**
   * The descriptor a bare name stands for on this broker. What a name needs beyond itself (a group,
   * a durable name) comes from the broker's configuration; where it is missing this throws a message
   * naming the setting, instead of inventing a default.
   */
  source(name: string): TSource;
  /** Subscribes to a bare name or one of this broker's descriptors. */
  subscribe(source: string | TSource): Promise<Subscription<TDelivery>>;
  /** The policy the runtime pairs for replies and retry copies when a mount names none. */
  defaultPublishPolicy(): PublishPolicy<this, TPublisher>;
  /**
   * Stops background work, flushes what it can and closes. Never hangs: the broker bounds its own
   * teardown. A second call resolves to the same witness.
   */
  shutdown(): Promise<TClosed>;
}

/**
 * The witness that a broker has shut down, carrying teardown facts as plain data. It has no way to
 * publish or subscribe: the type itself says the broker is gone. Every broker reports these under
 * these names (a connection on `ConnectionBase` gets all but `unflushed` filled in), and adds its
 * own facts beside them.
 */
export interface ClosedBroker {
  readonly [brokerMark]: string;
  readonly state: "closed";
  /** Messages accepted for publishing that were not confirmed by the broker before it closed. */
  readonly unflushed: number;
  /**
   * Subscriptions still open at shutdown, now closed. One closed before it is not counted, unless
   * it still held deliveries handed out and not settled, which the shutdown gives back.
   */
  readonly closedSubscriptions: number;
  /**
   * Deliveries the subscriptions held and never saw settled (read and not handed out, or handed out
   * and not settled), handed back at shutdown. Where they go is the broker's: back to the server,
   * which hands them out again, or, on a wire that keeps nothing, lost (each broker's README says).
   */
  readonly returnedDeliveries: number;
}

/** The kind of broker a value belongs to, or `undefined` when it is not a broker. */
export function brokerKind(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const kind = (value as { [brokerMark]?: unknown })[brokerMark];
  return typeof kind === "string" ? kind : undefined;
}
