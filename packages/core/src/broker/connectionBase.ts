import { RustStreamError } from "../errors.js";
import { brokerMark, sourceMark } from "../marks.js";
import type { Source } from "../source.js";
import type {
  ClosedBroker,
  ConnectionChange,
  ConnectionListener,
  ConnectionState,
} from "./contract.js";
import { type HostedSubscription, type SubscriptionHost, takeBack } from "./hostedSubscription.js";
import type { LinkChange } from "./linkStates.js";

/** How a broker's sources name what its replicas share (a consumer group, a subscription). */
export interface GroupSetting {
  /** What it is called, in messages: `"consumer group"`, `"subscription"`. */
  readonly noun: string;
  /** The broker option and the descriptor field that give it: `"group"`, `"subscription"`. */
  readonly option: string;
  /** The broker's class, named in the message: `"RedisBroker"`. */
  readonly broker: string;
  /** The descriptor a bare name becomes, named in the message: `"RedisStream"`. */
  readonly descriptor: string;
}

/** What a connection says about itself in the errors the base throws. */
export interface ConnectionIdentity {
  /** The broker's name in messages: `"Redis"`, `"file"`. */
  readonly label: string;
  /** What `subscribe` takes, for the foreign-descriptor error: `"a name or a KafkaTopic"`. */
  readonly accepts: string;
  /** Set where a source cannot be read without a shared name the broker never makes up. */
  readonly group?: GroupSetting;
  /**
   * How long a shutdown waits for the subscriptions to give back what they hold, where the server
   * may stop answering and nothing below bounds the wait (Pulsar: 5000); unset, as long as they take.
   */
  readonly takeBackWithinMs?: number;
}

/**
 * What a broker's `teardown()` answers: its own facts (`unflushed`, and any of its own), without
 * what the base fills in every closed witness alike.
 */
export type TeardownFacts<TClosed extends ClosedBroker> = Omit<
  TClosed,
  typeof brokerMark | "state" | "closedSubscriptions" | "returnedDeliveries"
>;

/**
 * What every connected broker does alike: its state (reported by the broker as its client sees it,
 * `closed` by the base as shutdown begins), a shutdown that runs once (a second call returns the
 * same witness), the `closed` error every handle throws after it, the checks `subscribe` starts
 * with (a descriptor of this broker, a group where one is needed), and its subscriptions: it holds
 * them (`adopt`), lets go of one that closes itself (`forget`), and takes them all back at shutdown
 * before the broker's own `teardown()`, counting them in the closed witness. A broker's
 * connection extends it and writes only its own teardown, so no two brokers word these differently
 * or keep their subscriptions two ways.
 *
 * `THosted` is what the connection holds; a broker that reads its subscriptions back
 * (`subscriptions`) names its own type, every other one leaves the default.
 */
export abstract class ConnectionBase<
  TSource extends Source,
  TClosed extends ClosedBroker,
  THosted extends HostedSubscription = HostedSubscription,
> implements SubscriptionHost
{
  abstract readonly [brokerMark]: string;
  readonly #identity: ConnectionIdentity;
  readonly #subscriptions = new Set<THosted>();
  readonly #onState: ConnectionListener | undefined;
  #change: ConnectionChange = { state: "connected" };
  #closing: Promise<TClosed> | undefined;

  /** `onState`: the connecting side's listener (`ConnectOptions.onState`), if it gave one. */
  constructor(identity: ConnectionIdentity, onState?: ConnectionListener) {
    this.#identity = identity;
    this.#onState = onState;
  }

  /** The descriptor a bare name stands for on this broker. */
  abstract source(name: string): TSource;

  /**
   * Stops the connection's work and closes it; called once, by the first `shutdown()`, once every
   * subscription was taken back (none reads through what this closes). Answers the broker's own
   * facts; the base adds what every witness carries.
   */
  protected abstract teardown(): Promise<TeardownFacts<TClosed>>;

  get state(): ConnectionState {
    return this.#change.state;
  }

  get isClosed(): boolean {
    return this.#closing !== undefined;
  }

  shutdown(): Promise<TClosed> {
    if (this.#closing === undefined) {
      // Closed before the subscriptions are taken back: what the client reports while closing is
      // no outage.
      this.#tell({ state: "closed" });
      this.#closing = this.#shutDown();
    }
    return this.#closing;
  }

  /**
   * The subscriptions are taken back first, in one step for every broker: revoked (none pulls
   * more), then surrendered together, so what they held goes back while the connection is still
   * there to carry it; then the broker's teardown closes the rest.
   */
  async #shutDown(): Promise<TClosed> {
    const subscriptions = [...this.#subscriptions];
    this.#subscriptions.clear();
    const returned = await takeBack(
      subscriptions,
      this.closedError("subscription"),
      this.#identity.takeBackWithinMs,
    );
    const facts = await this.teardown();
    // The spread and the four fields make a TClosed, which the compiler cannot see through Omit.
    return {
      ...facts,
      [brokerMark]: this[brokerMark],
      state: "closed",
      closedSubscriptions: subscriptions.length,
      returnedDeliveries: returned,
    } as unknown as TClosed;
  }

  /**
   * A subscription that closed itself: the connection lets go of it (SubscriptionHost). Any
   * subscription may be passed; one the connection does not hold changes nothing.
   */
  forget(subscription: HostedSubscription): void {
    // Deleting an object the set does not hold is a no-op, whatever its type.
    this.#subscriptions.delete(subscription as THosted);
  }

  /** The subscriptions the connection holds now, for a broker that tells them of its own work. */
  protected get subscriptions(): ReadonlySet<THosted> {
    return this.#subscriptions;
  }

  /**
   * What the broker's client saw of the server (`connected`, `reconnecting`, `lost`, with the
   * client's reason): passed on to the listener when the state differs from the last one, and
   * ignored once `shutdown()` was called, whose `closed` the base reports itself.
   */
  protected reportState(change: LinkChange): void {
    const now = this.#change.state;
    if (now === "closed" || change.state === now) return;
    this.#tell(change);
  }

  #tell(change: ConnectionChange): void {
    this.#change = change;
    const listener = this.#onState;
    if (listener === undefined) return;
    try {
      listener(change);
    } catch (error) {
      // Called from inside the broker's client (an event handler of its socket): a throw there
      // would leave the client half-updated, so it surfaces outside, as the listener's own failure.
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  /** Throws `closed` once `shutdown()` was called: every handle of the connection starts with it. */
  assertOpen(): void {
    if (this.#closing !== undefined) throw this.closedError("connection");
  }

  /** The error a `what` (connection, subscription, request) of this connection fails with after shutdown. */
  closedError(what: string): RustStreamError {
    return new RustStreamError(
      "closed",
      `this ${this.#identity.label} broker ${what} was used after shutdown(): connect again (broker.connect()) and use the new connection`,
    );
  }

  /**
   * The descriptor `subscribe` was given, a bare name resolved through `source()`; a value another
   * broker made (or none at all) fails `foreign-value` instead of being read as this broker's.
   */
  protected descriptorOf(source: string | TSource): TSource {
    const descriptor = typeof source === "string" ? this.source(source) : source;
    const kind = (descriptor as Partial<Source> | undefined)?.[sourceMark];
    if (kind !== this[brokerMark]) {
      throw new RustStreamError(
        "foreign-value",
        `the ${this.#identity.label} broker cannot subscribe to a descriptor of the "${String(kind)}" broker: use ${this.#identity.accepts}`,
      );
    }
    return descriptor;
  }

  /**
   * A subscription that finished opening, held from now on: the only way one joins the connection,
   * so none is missed at shutdown. While the connection is open it is held and answered as it is;
   * after a shutdown that ran while it opened, it is taken back and the `closed` error thrown, since
   * nothing may outlive the connection.
   */
  protected async adopt<S extends THosted>(subscription: S): Promise<S> {
    if (!this.isClosed) {
      this.#subscriptions.add(subscription);
      return subscription;
    }
    await takeBack([subscription], this.closedError("subscription"));
    throw this.closedError("connection");
  }

  /**
   * The group (or subscription) `name` is read through: the descriptor's, else the broker's option,
   * else the connecting app's name, as the caller resolved it. Missing, it fails naming the three
   * places to give it, never inventing one: replicas that made up their own would not share work.
   */
  protected groupOf(name: string, group: string | undefined): string {
    if (group !== undefined) return group;
    const setting = this.#identity.group;
    if (setting === undefined) {
      // A broker author's slip, not a user's: the connection reads through groups and never said how.
      throw new RustStreamError(
        "invalid-argument",
        `the ${this.#identity.label} broker needs a group for "${name}" and its connection declares no group setting: pass one in the ConnectionBase identity`,
      );
    }
    const { noun, option, broker, descriptor } = setting;
    throw new RustStreamError(
      "invalid-argument",
      `"${name}" has no ${noun}, and none is set: connect the broker through an app (its name is the ${noun}), give ${broker} a ${option} option (shared by the replicas) or give the descriptor one (new ${descriptor}("${name}", { ${option} })); replicas must share it, so it is never made up per process`,
    );
  }
}
