import type { Delivery } from "./delivery.js";
import { RustStreamError } from "./errors.js";
import {
  backlogMark,
  batchesMark,
  describeMark,
  hasMark,
  movesMark,
  requestMark,
  seekMark,
  transactionsMark,
  waitsMark,
} from "./marks.js";
import type { OutgoingMessage, RawMessage } from "./message.js";
import type { Publisher } from "./publisher.js";
import type { ServerDescription } from "./server.js";
import type { Subscription } from "./subscription.js";

// A broker offers a capability by carrying its mark; the guards below read only the mark, so they
// agree across copies of core and never mistake an unrelated object with a same-named method.

/** The position type of a delivery type. */
export type PositionOf<TDelivery> = TDelivery extends Delivery<infer P> ? P : never;

/** A subscription that hands over deliveries in batches. */
export interface BatchSubscription<TDelivery extends Delivery = Delivery>
  extends Subscription<TDelivery> {
  readonly [batchesMark]: true;
  /**
   * Waits for one delivery, then returns it with those already waiting, at most `max` and in source
   * order; resolves `[]` once the subscription is closed. Each element is settled on its own.
   */
  nextBatch(max: number): Promise<readonly TDelivery[]>;
}

/** The check every `nextBatch(max)` starts with: `max` is a whole number, 1 or more. */
export function assertBatchSize(max: number): void {
  if (!Number.isInteger(max) || max < 1) {
    throw new RustStreamError("invalid-argument", `nextBatch(${max}): ask for 1 or more`);
  }
}

/**
 * A subscription whose broker moves some messages to a dead letter without ever handing them over:
 * one redelivered past the declared cap (another consumer asked for a retry at its last attempt, or
 * died in it). It reports each, so the app's observers count it with the dead letters the runtime
 * sends.
 */
export interface ReportsMoves {
  readonly [movesMark]: true;
  /** Sets the one listener, called once a message was moved (not before the move succeeded). */
  onMoved(listener: (moved: Delivery, destination: string, reason: string) => void): void;
}

/** True for a subscription that reports the moves its broker makes without handing them over. */
export function reportsMoves(value: unknown): value is ReportsMoves {
  return hasMark(value, movesMark);
}

/**
 * Where a message of a subscription's source waits: `ready` to be taken now, `scheduled` for later
 * (a delayed publish, a retry with a delay), `leased` taken by a consumer (this one or another
 * replica) and not settled yet, `dead-lettered` moved to the subscription's dead letter and not
 * redriven.
 */
export type BacklogState = "ready" | "scheduled" | "leased" | "dead-lettered";

/** A subscription's backlog: a count for each state its broker can tell, none for the others. */
export type BacklogCounts = Readonly<Partial<Record<BacklogState, number>>>;

/**
 * A subscription whose broker can say, on demand, how many messages wait in its source. Optional:
 * a broker without it reports no backlog, and nothing else changes. `backlog()` is asked at a
 * metrics scrape, not per message: the broker keeps it to one cheap read (its README says what it
 * costs), and may reject (the server away); the caller bounds how long it waits.
 */
export interface ReportsBacklog {
  readonly [backlogMark]: true;
  backlog(): Promise<BacklogCounts>;
}

/** True for a subscription that answers its backlog. */
export function reportsBacklog(value: unknown): value is ReportsBacklog {
  return hasMark(value, backlogMark);
}

/**
 * A subscription whose broker knows, as it takes a message, how long the message waited since it
 * was due (a queue row's run time to its claim). Optional: a broker without it reports nothing.
 */
export interface ReportsWaits {
  readonly [waitsMark]: true;
  /** Sets the one listener, called for each message taken, with its wait in milliseconds. */
  onWaited(listener: (waitedMs: number) => void): void;
}

/** True for a subscription that reports how long the messages it takes waited. */
export function reportsWaits(value: unknown): value is ReportsWaits {
  return hasMark(value, waitsMark);
}

/** A subscription that can move to a position. */
export interface SeekableSubscription<TDelivery extends Delivery = Delivery>
  extends Subscription<TDelivery> {
  readonly [seekMark]: true;
  /**
   * The next delivery is the message at `position`, then the ones after it in order. Deliveries
   * handed out before the seek may still be settled; the broker's README says whether a seek moves
   * one subscription or its whole group. Rejects with `unknown-position` (and does not move) when the
   * position was evicted or never existed.
   */
  seek(position: PositionOf<TDelivery>): Promise<void>;
  /** Reads back a position stored as `position.toString()`. */
  parsePosition(text: string): PositionOf<TDelivery>;
}

/** Publishes inside a transaction: all of them become visible at commit, or none. */
export interface Transaction<TOptions = never> {
  /** Rejects with `transaction-ended` once the transaction has committed or aborted. */
  publish(message: OutgoingMessage<TOptions>): Promise<void>;
}

/** A publisher that can publish atomically. */
export interface TransactionalPublisher<TOptions = never> extends Publisher<TOptions> {
  readonly [transactionsMark]: true;
  /**
   * Runs `work` in a new transaction: commits when it resolves, aborts when it throws (and rethrows).
   * Transactions are independent of each other and of direct publishes.
   */
  transaction<T>(work: (tx: Transaction<TOptions>) => Promise<T>): Promise<T>;
}

export interface RequestOptions {
  /** How long to wait for the reply; then the request rejects with code `timeout`. */
  readonly timeoutMs: number;
  /**
   * Takes several replies: the request carries `x-ruststream-reply-stream`, each reply marked
   * `x-ruststream-more-replies` comes here as it arrives (and waits `timeoutMs` again for the next),
   * and the request resolves with the first reply without the mark, the last one. Without it the
   * first reply is the answer, marked or not.
   */
  readonly onPartial?: (reply: RawMessage) => void;
}

/** A publisher that can send a request and wait for its reply. */
export interface Requester<TOptions = never> extends Publisher<TOptions> {
  readonly [requestMark]: true;
  /**
   * Publishes `message` with a `reply-to` the broker can route back and a fresh `correlation-id`,
   * and resolves with the reply that carries the same `correlation-id`.
   */
  request(message: OutgoingMessage<TOptions>, options: RequestOptions): Promise<RawMessage>;
}

/** A broker, connected or not, that describes its server for generated docs. */
export interface DescribesServer {
  readonly [describeMark]: true;
  /** Never contains credentials: see `hostFromUrl` and `withoutSecrets`. */
  describeServer(): ServerDescription;
}

export function supportsBatches<TDelivery extends Delivery>(
  subscription: Subscription<TDelivery>,
): subscription is BatchSubscription<TDelivery> {
  return hasMark(subscription, batchesMark);
}

export function supportsSeek<TDelivery extends Delivery>(
  subscription: Subscription<TDelivery>,
): subscription is SeekableSubscription<TDelivery> {
  return hasMark(subscription, seekMark);
}

export function supportsTransactions<TOptions>(
  publisher: Publisher<TOptions>,
): publisher is TransactionalPublisher<TOptions> {
  return hasMark(publisher, transactionsMark);
}

export function supportsRequest<TOptions>(
  publisher: Publisher<TOptions>,
): publisher is Requester<TOptions> {
  return hasMark(publisher, requestMark);
}

export function supportsDescribeServer(broker: object): broker is DescribesServer {
  return hasMark(broker, describeMark);
}
