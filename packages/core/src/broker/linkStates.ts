import type { ConnectionChange, ConnectionState } from "./contract.js";

/** What a broker's client reports of one of its links: any state but `closed`, a shutdown's. */
export type LinkState = Exclude<ConnectionState, "closed">;

/** A link's new state, and the client's reason when it is not `connected`. */
export interface LinkChange extends ConnectionChange {
  readonly state: LinkState;
}

const connected: LinkChange = { state: "connected" };
const rank: Readonly<Record<LinkState, number>> = { connected: 0, reconnecting: 1, lost: 2 };

/**
 * The state of a connection that holds several links to the server (a client per subscription, a
 * blocking reader's socket, a producer and its consumer): each link reports its own, and the
 * connection is in the worst of them, `lost` when one is lost, `reconnecting` when one reconnects,
 * `connected` when every link is (or none is open), with the reason of the first link in that state.
 * The broker's client layer reports into it from where its client knows; the connection follows
 * it (`follow`) and hears only changes of the state.
 */
export class LinkStates {
  /** The links not `connected`, in the order they left it. */
  readonly #away = new Map<object, LinkChange>();
  #current: LinkChange = connected;
  #listener: ((change: LinkChange) => void) | undefined;

  /** Where the connection is now. */
  get current(): LinkChange {
    return this.#current;
  }

  /**
   * Sends every later change of the connection's state to `listener` (the connection's
   * `reportState`), and the current one at once when it is not `connected`. One listener only.
   */
  follow(listener: (change: LinkChange) => void): void {
    if (this.#listener !== undefined) {
      // A broker author's slip: two connections on one link would each hear half of nothing.
      throw new Error("LinkStates.follow was called twice: one connection follows its links");
    }
    this.#listener = listener;
    if (this.#current.state !== "connected") listener(this.#current);
  }

  /** `link` (any object the client layer keys it by) is in `change.state` now. */
  report(link: object, change: LinkChange): void {
    if (change.state === "connected") {
      if (!this.#away.delete(link)) return;
    } else {
      // A link already away keeps its place: the order is when each left `connected`.
      this.#away.set(link, change);
    }
    this.#update();
  }

  /** `link` was closed on purpose (its subscription ended, say): its state counts no more. */
  forget(link: object): void {
    if (this.#away.delete(link)) this.#update();
  }

  #update(): void {
    let worst = connected;
    for (const change of this.#away.values()) {
      if (rank[change.state] > rank[worst.state]) worst = change;
    }
    const changed = worst.state !== this.#current.state;
    this.#current = worst;
    if (changed) this.#listener?.(worst);
  }
}
