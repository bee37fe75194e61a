import type { ClosedBroker } from "../broker.js";
import type { ConnectionChange, ConnectionListener, ConnectionState } from "../connectionState.js";
import { RustStreamError } from "../errors.js";
import { brokerMark, sourceMark } from "../marks.js";
import type { Source } from "../source.js";
import { type HostedSubscription, takeBack } from "./hostedSubscription.js";
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
}

/**
 * What every connected broker does alike: its state (reported by the broker as its client sees it,
 * `closed` by the base at shutdown), a shutdown that runs once (a second call returns the same
 * witness), the `closed` error every handle throws after it, and the checks `subscribe` starts with
 * (a descriptor of this broker, a group where one is needed). A broker's connection extends it and
 * writes only its own teardown, so no two brokers word these differently.
 */
export abstract class ConnectionBase<TSource extends Source, TClosed extends ClosedBroker> {
  abstract readonly [brokerMark]: string;
  readonly #identity: ConnectionIdentity;
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

  /** Stops the connection's work and closes it; called once, by the first `shutdown()`. */
  protected abstract teardown(): Promise<TClosed>;

  get state(): ConnectionState {
    return this.#change.state;
  }

  get isClosed(): boolean {
    return this.#closing !== undefined;
  }

  shutdown(): Promise<TClosed> {
    if (this.#closing === undefined) {
      // Closed before the teardown starts: what the client reports while closing is no outage.
      this.#tell({ state: "closed" });
      this.#closing = this.teardown();
    }
    return this.#closing;
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
   * A subscription that finished opening: answered as it is while the connection is open; after a
   * shutdown that ran while it opened, taken back and the `closed` error thrown, since nothing may
   * outlive the connection.
   */
  protected async unlessClosed<S extends HostedSubscription>(subscription: S): Promise<S> {
    if (!this.isClosed) return subscription;
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
