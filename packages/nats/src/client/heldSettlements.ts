import type { JsMsg } from "@nats-io/jetstream";

/** A held settlement's verb: what the client's JsMsg is told when it is written. */
type Verb = "ack" | "nak" | "term" | "working";

/**
 * The JetStream settlements (ack, nak, term, working beats) of one turn of the event loop, written
 * together at its end. The client flushes what one microtask wrote, so settlements made a
 * microtask apart (a handler each) each cost a socket write; held to the turn's end they share
 * one. They are written in the order they were made, each with its own verb, so the server sees
 * what it would have seen had each been sent at once.
 *
 * What must follow them on the wire writes them first (`write()`): an ack that waits for the
 * server's confirmation, a seek's give-back, a subscription letting go, the connection closing.
 */
export class HeldSettlements {
  #messages: JsMsg[] = [];
  #verbs: Verb[] = [];
  /** A nak's delay (ms) or a term's reason; `undefined` for the rest. */
  #args: (number | string | undefined)[] = [];
  #scheduled = false;
  readonly #atTurnEnd = () => {
    this.#scheduled = false;
    this.write();
  };

  ack(message: JsMsg): void {
    this.#hold(message, "ack", undefined);
  }

  nak(message: JsMsg, delayMs: number | undefined): void {
    this.#hold(message, "nak", delayMs);
  }

  term(message: JsMsg, reason: string): void {
    this.#hold(message, "term", reason);
  }

  working(message: JsMsg): void {
    this.#hold(message, "working", undefined);
  }

  /** Hands every held settlement to the client now, in the order they were made. */
  write(): void {
    const messages = this.#messages;
    if (messages.length === 0) return;
    const verbs = this.#verbs;
    const args = this.#args;
    this.#messages = [];
    this.#verbs = [];
    this.#args = [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i] as JsMsg;
      try {
        switch (verbs[i]) {
          case "ack":
            m.ack();
            break;
          case "nak":
            m.nak(args[i] as number | undefined);
            break;
          case "term":
            m.term(args[i] as string);
            break;
          default:
            m.working();
        }
      } catch {
        // The client closed the connection (it gave up reconnecting; the link reported it lost):
        // what was not written the server delivers again once its ack wait passes, as it would
        // have had the settlement been refused when made. The rest are tried all the same.
      }
    }
  }

  #hold(message: JsMsg, verb: Verb, arg: number | string | undefined): void {
    this.#messages.push(message);
    this.#verbs.push(verb);
    this.#args.push(arg);
    if (this.#scheduled) return;
    this.#scheduled = true;
    // setImmediate runs after the turn's I/O callbacks and every microtask they queued: what every
    // handler of this turn settled is held by then.
    setImmediate(this.#atTurnEnd);
  }
}
