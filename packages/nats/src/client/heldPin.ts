import type { ConsumerNotification } from "@nats-io/jetstream";
import type { Logger } from "@ruststream/core";

/** Where a pin is held: the consumer and its pinned priority group. */
export interface PinPlace {
  readonly stream: string;
  readonly consumer: string;
  readonly group: string;
}

/** What became of a pin as its subscription let go of it (`giveUpPin`'s answer). */
export type PinLetGo = "given-up" | "moved" | "failed";

/** What the app's logger is told of each move. */
const lines = {
  pinned:
    "nats: this app's pulls are pinned in the priority group: the server hands its messages to them alone",
  lost: "nats: this app's pulls lost their pin in the priority group: the server pins another client's",
  givenUp:
    "nats: this app gave its pin in the priority group up: the server pins another client's pulls",
  failed:
    "nats: this app could not give its pin in the priority group up: it lapses after pinTtlMs",
} as const;

/**
 * The pin a consumer link's pulls hold in a pinned priority group, followed from the client's
 * statuses, each move told to the app's logger (an `info` line naming the stream, consumer, group
 * and pin id). The client tells `consumer_pinned` on the first message a pull request brings with
 * a pin, again for each new request: only a pin other than the one held is a move.
 * `consumer_unpinned` is the server's answer (423) to a pull carrying a pin it no longer honours.
 */
export class HeldPin {
  readonly #log: Logger;
  readonly place: PinPlace;
  #id: string | undefined;

  constructor(log: Logger, place: PinPlace) {
    this.#log = log;
    this.place = place;
  }

  /** The pin the server gave this link's pulls, while they hold it. */
  get id(): string | undefined {
    return this.#id;
  }

  heard(status: ConsumerNotification): void {
    if (status.type === "consumer_pinned") {
      if (status.id === this.#id) return;
      this.#id = status.id;
      this.#tell(status.id, lines.pinned);
    } else if (status.type === "consumer_unpinned") {
      this.#lost(lines.lost);
    }
  }

  /**
   * This app lets go of its pin as its subscription does: it gave it up (the server's unpin), the
   * server had moved it already, or the unpin failed and the pin lapses after its TTL.
   */
  letGo(outcome: PinLetGo): void {
    this.#lost(
      outcome === "given-up" ? lines.givenUp : outcome === "moved" ? lines.lost : lines.failed,
    );
  }

  #lost(message: string): void {
    const id = this.#id;
    if (id === undefined) return;
    this.#id = undefined;
    this.#tell(id, message);
  }

  #tell(pinId: string, message: string): void {
    this.#log.info({ broker: "nats", ...this.place, pinId }, message);
  }
}
