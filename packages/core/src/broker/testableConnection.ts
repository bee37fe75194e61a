import { RustStreamError } from "../errors.js";
import { testableMark } from "../marks.js";
import type { OutgoingMessage, RawMessage } from "../message.js";
import { snapshotMessage } from "../message.js";
import type { Source } from "../source.js";
import { ConnectionBase, type ConnectionIdentity } from "./connectionBase.js";
import type { ClosedBroker, ConnectionListener } from "./contract.js";
import type { HostedSubscription } from "./hostedSubscription.js";

/** A message made ready to inject: what the log records, and the synchronous hand-over. */
export interface Injection {
  readonly raw: RawMessage;
  /** Hands the message to the in-process server now, through its normal routing. */
  deliver(): void;
}

/** What `published(name)` reads: every message recorded, per name, in order. */
export type PublishedLog = Map<string, RawMessage[]>;

/**
 * What a connection offers a test. `true`: an in-process connection, with the testable mark,
 * `inject` and `published()` over a log of its own. `false`: a server connection, none of them.
 * `{ log }`: a broker whose every connection may inject, since an injection is a write its real
 * server takes too (memory, file): the mark and `inject` on every connection, and `published()`
 * over `log` where one is given (the memory broker's is shared by the connections of one broker
 * object, as a server is); without one, `published()` refuses and nothing is recorded.
 */
export type Testability = boolean | { readonly log: PublishedLog | undefined };

/**
 * A connection whose in-process form is a test transport (`TestableBroker`): it carries the
 * testable mark, records every publish for `published(name)`, and injects as if from outside the
 * process. A server connection carries no mark and records nothing, so production pays nothing
 * and a harness cannot mistake it for a test transport. The broker writes only `prepareInjection`.
 */
export abstract class TestableConnection<
  TSource extends Source,
  TClosed extends ClosedBroker,
  TOptions = never,
  THosted extends HostedSubscription = HostedSubscription,
> extends ConnectionBase<TSource, TClosed, THosted> {
  readonly #published: PublishedLog | undefined;
  readonly #injects: boolean;

  /** `onState`: the connecting side's listener (`ConnectOptions.onState`), if it gave one. */
  constructor(
    identity: ConnectionIdentity,
    testability: Testability,
    onState?: ConnectionListener,
  ) {
    super(identity, onState);
    this.#injects = testability !== false;
    this.#published =
      typeof testability === "boolean" ? (testability ? new Map() : undefined) : testability.log;
    if (this.#injects) Object.defineProperty(this, testableMark, { value: true });
  }

  /** Encodes `message` as a publish through this connection would, refusing what a publish refuses. */
  protected abstract prepareInjection(message: OutgoingMessage<TOptions>): Injection;

  /** Keeps a copy of what was published, where there is a log; a no-op on a server connection. */
  record(message: RawMessage): void {
    if (this.#published === undefined) return;
    let log = this.#published.get(message.name);
    if (log === undefined) {
      log = [];
      this.#published.set(message.name, log);
    }
    log.push(snapshotMessage(message));
  }

  /** In-process: publishes as if from outside the process, synchronously, through normal routing. */
  inject(message: OutgoingMessage<TOptions>): void {
    if (!this.#injects) throw this.notInProcess("inject() works");
    this.assertOpen();
    const injection = this.prepareInjection(message);
    // Recorded before it is delivered: a handler reacting synchronously publishes after it.
    this.record(injection.raw);
    injection.deliver();
  }

  /** In-process: every message published to `name` through this connection, injections included. */
  published(name: string): readonly RawMessage[] {
    if (this.#published === undefined) throw this.notInProcess("published() records");
    return [...(this.#published.get(name) ?? [])];
  }

  /** What a test-only method throws on a server connection. */
  protected notInProcess(what: string): RustStreamError {
    return new RustStreamError(
      "invalid-argument",
      `${what} only on an in-process connection: connect with connectInProcess()`,
    );
  }
}
