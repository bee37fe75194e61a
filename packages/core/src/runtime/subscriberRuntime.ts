import { supportsBatches } from "../capabilities.js";
import type { Clock, ClockTimer } from "../clock.js";
import type { Codec } from "../codec/codec.js";
import type { Delivery, SettleResult } from "../delivery.js";
import { isRustStreamError, RustStreamError } from "../errors.js";
import { HeaderMap, type ReadonlyHeaderMap } from "../headerMap.js";
import { headerNames, readRetryCount, writeRetryCount } from "../headerNames.js";
import type { OutgoingMessage } from "../message.js";
import type { Publisher } from "../publisher.js";
import type { Source } from "../source.js";
import type { Subscription } from "../subscription.js";
import type { BatchContext, HandlerContext } from "./context.js";
import type { Observer, SettledAs } from "./events.js";
import type { Logger } from "./logger.js";
import type { ConsumeMiddleware } from "./middleware.js";
import type { OutPublisher } from "./out.js";
import { ack, isOutcome, type Outcome } from "./outcome.js";
import type { PublishPipeline } from "./publishing.js";
import { describeIssues, type StandardSchemaV1 } from "./standardSchema.js";
import {
  type DecodePolicy,
  defaultMaxAttempts,
  type ErasedKey,
  type ErrorPolicy,
  type SubscriberSpec,
} from "./subscriberSpec.js";
import type { WorkCounter } from "./workCounter.js";

/** What a subscriber's dispatch needs from the running app. */
export interface DispatchHost {
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly work: WorkCounter;
  readonly pipeline: PublishPipeline;
  readonly consume: readonly ConsumeMiddleware[];
  /** Undefined when nobody observes, so the hot path builds no events. */
  readonly emit: Observer | undefined;
  failFast(subscriber: string, reason: unknown): void;
}

/** Everything resolved at startup for one subscriber. */
export interface SubscriberWiring {
  readonly spec: SubscriberSpec;
  readonly name: string;
  readonly source: Source;
  readonly subscription: Subscription;
  /** Publishes replies, retry copies and dead-lettered copies. */
  readonly publisher: Publisher<never>;
  readonly out: Readonly<Record<string, OutPublisher<unknown>>>;
  readonly log: Logger;
}

// Returned by decode when the delivery failed and has been settled by the decode policy.
const FAILED: unique symbol = Symbol("failed");
type Decoded = unknown;

// Validation that answered with a promise; rare, so the common path never allocates one.
class PendingDecode {
  constructor(readonly promise: Promise<Decoded | typeof FAILED>) {}
}

type Awaiting = Promise<void> | undefined;
const ackOutcome = ack();
type Invoke = (message: unknown, ctx: DeliveryContext) => unknown;

interface Lane {
  busy: boolean;
  /** Pairs of delivery and decoded message, flattened. */
  readonly queue: unknown[];
}

/**
 * The attempt a delivery is, counting from 1. The broker's count restarts on every republished copy,
 * and a copy carries the deliveries before it in the retry-count header, so the sum is the total
 * whichever way the message came back (requeue, copy, or both in turn).
 */
export function attemptOf(delivery: Delivery): number {
  return readRetryCount(delivery.headers) + (delivery.redeliveryCount ?? 1);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

// FNV-1a: cheap, stable across processes and runs, good enough to spread keys over a few lanes.
function hashKey(key: string | number | Uint8Array): number {
  let hash = 0x811c9dc5;
  if (typeof key === "number") key = String(key);
  if (typeof key === "string") {
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  } else {
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key[i]!, 0x01000193);
  }
  return hash >>> 0;
}

class DeliveryContext implements HandlerContext<Readonly<Record<string, OutPublisher<unknown>>>> {
  readonly delivery: Delivery;
  readonly #runtime: SubscriberRuntime;

  constructor(runtime: SubscriberRuntime, delivery: Delivery) {
    this.#runtime = runtime;
    this.delivery = delivery;
  }
  get name(): string {
    return this.delivery.name;
  }
  get headers(): ReadonlyHeaderMap {
    return this.delivery.headers;
  }
  get attempt(): number {
    return attemptOf(this.delivery);
  }
  get log(): Logger {
    return this.#runtime.log;
  }
  get signal(): AbortSignal {
    return this.#runtime.host.signal;
  }
  get out(): Readonly<Record<string, OutPublisher<unknown>>> {
    return this.#runtime.out;
  }
}

interface PendingCopy {
  readonly message: OutgoingMessage;
  readonly timer: ClockTimer;
}

/**
 * Runs one subscriber: pulls deliveries in batches, decodes and validates them, runs the handler on
 * the lanes `workers` asked for, publishes replies and settles by outcome and failure policy.
 *
 * The hot path awaits only what really is asynchronous: a pull that found nothing waiting, a handler
 * that returned a promise, a full set of lanes. Synchronous handlers on a broker that settles
 * synchronously run back to back through a pulled batch.
 */
export class SubscriberRuntime {
  readonly name: string;
  readonly host: DispatchHost;
  readonly log: Logger;
  readonly out: Readonly<Record<string, OutPublisher<unknown>>>;
  readonly #spec: SubscriberSpec;
  readonly #subscription: Subscription;
  readonly #publisher: Publisher<never>;
  readonly #codec: Codec<unknown>;
  readonly #schema: StandardSchemaV1 | undefined;
  readonly #invoke: Invoke;
  readonly #redeliveryAddress: string | undefined;
  /** The broker applies the cap and the dead letter itself (a broker-moved source with both). */
  readonly #brokerMoves: boolean;
  readonly #cap: number;
  readonly #errorPolicy: ErrorPolicy;
  readonly #decodePolicy: DecodePolicy;
  readonly #backoffInitial: number;
  readonly #backoffMax: number;
  readonly #prefetch: number;
  readonly #workers: number;
  readonly #key: ErasedKey | undefined;
  readonly #lanes: Lane[] | undefined;
  readonly #pendingCopies = new Set<PendingCopy>();
  #roundRobin = 0;
  #active = 0;
  #queued = 0;
  #settling = 0;
  #waiter: (() => void) | undefined;
  #stopping = false;
  #stopped!: () => void;
  // Resolves at stop(): a pull loop waiting on a handler that never returns is released by it.
  readonly #stopSignal = new Promise<void>((resolve) => {
    this.#stopped = resolve;
  });
  #warnedUnreplied = false;
  #pumping: Promise<void> | undefined;

  constructor(host: DispatchHost, wiring: SubscriberWiring) {
    const spec = wiring.spec;
    this.host = host;
    this.name = wiring.name;
    this.log = wiring.log;
    this.out = wiring.out;
    this.#spec = spec;
    this.#subscription = wiring.subscription;
    this.#publisher = wiring.publisher;
    this.#codec = spec.codec;
    this.#schema = spec.schema;
    const source = wiring.source;
    this.#redeliveryAddress = source.copies === "addressed" ? source.redeliveryAddress : undefined;
    this.#brokerMoves =
      source.copies === "broker" &&
      source.retry?.deadLetter !== undefined &&
      source.retry.maxAttempts !== undefined;
    this.#cap = spec.maxAttempts ?? defaultMaxAttempts;
    this.#errorPolicy = spec.failure.error ?? "retry";
    this.#decodePolicy =
      spec.failure.decode ?? (spec.deadLetter !== undefined ? "dead-letter" : "drop");
    this.#backoffInitial = spec.failure.backoff?.initialMs ?? 100;
    this.#backoffMax = spec.failure.backoff?.maxMs ?? 10_000;
    this.#prefetch = spec.batch ?? spec.prefetch ?? 256;
    this.#workers = spec.workers;
    this.#key = spec.key;
    this.#lanes =
      spec.key === undefined
        ? undefined
        : Array.from({ length: spec.workers }, () => ({ busy: false, queue: [] }));
    this.#invoke = this.#compose(spec.handler as (message: unknown, ctx: unknown) => unknown);
  }

  /** Starts pulling. */
  start(): void {
    this.#pumping = this.#pump();
  }

  /**
   * Stops pulling and returns what was pulled but never handed to the handler. Resolves once the
   * pull loop has ended; handlers still running keep running (the app drains them).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#stopped();
    this.#wake();
    try {
      await this.#subscription.close();
    } catch (error) {
      this.log.warn({ error }, "closing the subscription failed");
    }
    await this.#pumping;
  }

  /** Publishes every copy still waiting for its delay now, so none is lost to the shutdown. */
  flushCopies(): void {
    for (const copy of this.#pendingCopies) {
      copy.timer.cancel();
      this.#sendCopy(copy);
    }
  }

  // The pull loop.

  async #pump(): Promise<void> {
    const subscription = this.#subscription;
    const batched = supportsBatches(subscription);
    try {
      while (!this.#stopping) {
        let deliveries: readonly Delivery[];
        if (batched) {
          deliveries = await subscription.nextBatch(this.#prefetch);
        } else {
          const next = await subscription.next();
          deliveries = next.done ? [] : [next.value];
        }
        if (deliveries.length === 0) return;
        if (this.#spec.batch !== undefined) {
          const wait = this.#acceptBatch(deliveries);
          if (wait !== undefined) await Promise.race([wait, this.#stopSignal]);
          continue;
        }
        for (let i = 0; i < deliveries.length; i++) {
          if (this.#stopping) {
            this.#giveBack(deliveries, i);
            return;
          }
          const wait = this.#accept(deliveries[i]!);
          if (wait !== undefined) await Promise.race([wait, this.#stopSignal]);
        }
        // Replies and settles still waiting on the broker hold back the next pull.
        while (this.#settling >= this.#prefetch && !this.#stopping) await this.#capacity();
      }
    } catch (error) {
      if (this.#stopping) return;
      this.log.error({ error }, "the subscription failed; stopping the app");
      this.host.failFast(this.name, error);
    }
  }

  // Pulled ahead but never handled: back to the broker, so nothing read ahead is lost.
  #giveBack(deliveries: readonly Delivery[], from: number): void {
    for (let i = from; i < deliveries.length; i++) {
      const delivery = deliveries[i]!;
      this.#settle(() => delivery.nack({ requeue: true }), undefined);
    }
  }

  #accept(delivery: Delivery): Awaiting {
    // Past the cap, a delivery came back unsettled after its last attempt (its consumer died
    // mid-handler): it has had every attempt the mount allows, so it is not handled again.
    if (!this.#brokerMoves) {
      const attempt = attemptOf(delivery);
      if (attempt > this.#cap) {
        const started = this.host.emit === undefined ? 0 : this.host.clock.now();
        this.#giveUp(delivery, undefined, attempt, started, undefined, false);
        return undefined;
      }
    }
    const decoded = this.#decode(delivery);
    if (decoded === FAILED) return undefined;
    if (decoded instanceof PendingDecode) {
      return decoded.promise.then((message) =>
        message === FAILED ? undefined : this.#route(delivery, message),
      );
    }
    return this.#route(delivery, decoded);
  }

  // Concurrency: sequential, `workers(n)`, or `workers(n, { key })`.

  #route(delivery: Delivery, message: unknown): Awaiting {
    const lanes = this.#lanes;
    if (lanes === undefined) {
      const running = this.#handle(delivery, message);
      if (running === undefined) return undefined;
      if (this.#workers === 1) return running;
      this.#active++;
      running.then(() => {
        this.#active--;
        this.#wake();
      });
      return this.#active >= this.#workers ? this.#capacity() : undefined;
    }
    const lane = lanes[this.#laneOf(delivery, message)]!;
    if (lane.busy) {
      lane.queue.push(delivery, message);
      this.#queued++;
    } else {
      const running = this.#handle(delivery, message);
      if (running === undefined) return undefined;
      lane.busy = true;
      this.#active++;
      running.then(() => this.#laneNext(lane));
    }
    return this.#active + this.#queued >= this.#prefetch ? this.#capacity() : undefined;
  }

  #laneNext(lane: Lane): void {
    while (lane.queue.length > 0) {
      const delivery = lane.queue.shift() as Delivery;
      const message = lane.queue.shift();
      this.#queued--;
      const running = this.#handle(delivery, message);
      if (running !== undefined) {
        running.then(() => this.#laneNext(lane));
        this.#wake();
        return;
      }
    }
    lane.busy = false;
    this.#active--;
    this.#wake();
  }

  #laneOf(delivery: Delivery, message: unknown): number {
    const key = this.#key;
    let value: string | number | Uint8Array | undefined;
    if (key === "partition") {
      value = delivery.partitionKey;
    } else if (key !== undefined) {
      try {
        value = key(message);
      } catch (error) {
        this.log.warn({ error }, "the key function threw; the message goes to the next lane");
      }
    }
    if (value === undefined) return this.#roundRobin++ % this.#workers;
    return hashKey(value) % this.#workers;
  }

  #capacity(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  #wake(): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    waiter();
  }

  // Decode and validate.

  #decode(delivery: Delivery): Decoded | typeof FAILED | PendingDecode {
    let value: unknown;
    try {
      value = this.#codec.decode(delivery.payload);
    } catch (error) {
      this.#decodeFailed(delivery, error);
      return FAILED;
    }
    const schema = this.#schema;
    if (schema === undefined) return value;
    let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
    try {
      result = schema["~standard"].validate(value);
    } catch (error) {
      this.#decodeFailed(delivery, error);
      return FAILED;
    }
    if (result instanceof Promise) {
      return new PendingDecode(
        result.then(
          (checked) => this.#checked(delivery, checked),
          (error: unknown) => {
            this.#decodeFailed(delivery, error);
            return FAILED;
          },
        ),
      );
    }
    return this.#checked(delivery, result);
  }

  #checked(delivery: Delivery, result: StandardSchemaV1.Result<unknown>): Decoded | typeof FAILED {
    if (result.issues === undefined) return result.value;
    this.#decodeFailed(
      delivery,
      new RustStreamError(
        "invalid-argument",
        `the message on "${delivery.name}" does not match the subscriber's schema: ${describeIssues(result.issues)}`,
        { cause: result.issues },
      ),
    );
    return FAILED;
  }

  #decodeFailed(delivery: Delivery, error: unknown): void {
    this.host.emit?.({ type: "decode-failure", subscriber: this.name, delivery, error });
    this.log.warn(
      { error, position: String(delivery.position), policy: this.#decodePolicy },
      "message failed to decode",
    );
    switch (this.#decodePolicy) {
      case "drop":
        this.#drop(delivery);
        this.#emitOutcome(delivery, undefined, "drop", 0, error, false);
        return;
      case "dead-letter":
        this.#deadLetter(delivery, "decode");
        this.#emitOutcome(delivery, undefined, "dead-letter", 0, error, false);
        return;
      case "fail-fast":
        this.host.failFast(this.name, error);
        this.#emitOutcome(delivery, undefined, "left-open", 0, error, false);
        return;
    }
  }

  // Run the handler.

  #compose(handler: (message: unknown, ctx: unknown) => unknown): Invoke {
    let invoke: Invoke = handler;
    const layers = this.#spec.batch === undefined ? this.host.consume : [];
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i]!;
      const next = invoke;
      invoke = (message, ctx) =>
        layer(message, ctx as unknown as HandlerContext<Readonly<Record<string, never>>>, () =>
          next(message, ctx),
        );
    }
    return invoke;
  }

  #handle(delivery: Delivery, message: unknown): Promise<void> | undefined {
    const ctx = new DeliveryContext(this, delivery);
    const started = this.host.emit === undefined ? 0 : this.host.clock.now();
    let result: unknown;
    try {
      result = this.#invoke(message, ctx);
    } catch (error) {
      this.#failed(delivery, message, error, started);
      return undefined;
    }
    if (!isPromiseLike(result)) {
      this.#finish(delivery, message, result, started);
      return undefined;
    }
    const running = Promise.resolve(result).then(
      (value) => this.#finish(delivery, message, value, started),
      (error: unknown) => this.#failed(delivery, message, error, started),
    );
    this.host.work.track(running);
    return running;
  }

  #finish(delivery: Delivery, message: unknown, result: unknown, started: number): void {
    if (result === undefined) {
      this.#apply(delivery, message, ackOutcome, started);
      return;
    }
    if (isOutcome(result)) {
      this.#apply(delivery, message, result, started);
      return;
    }
    const reply = this.#spec.reply;
    if (reply === undefined) {
      if (!this.#warnedUnreplied) {
        this.#warnedUnreplied = true;
        this.log.warn(
          "the handler returned a value but the subscriber declares no reply(); it is dropped",
        );
      }
      this.#apply(delivery, message, ackOutcome, started);
      return;
    }
    const destination = reply.destination ?? delivery.headers.getString(headerNames.replyTo);
    if (destination === undefined || destination === "") {
      this.log.warn(
        { position: String(delivery.position) },
        "no reply-to on the message, so the reply goes nowhere",
      );
      this.#apply(delivery, message, ackOutcome, started);
      return;
    }
    let payload: Uint8Array;
    try {
      payload = this.#codec.encode(result);
    } catch (error) {
      this.#failed(delivery, message, error, started);
      return;
    }
    const headers = new HeaderMap().set(headerNames.contentType, this.#codec.contentType);
    const correlation = delivery.headers.get(headerNames.correlationId);
    if (correlation !== undefined) headers.set(headerNames.correlationId, correlation);
    const sent = this.host.pipeline
      .publish(this.#publisher, { name: destination, payload, headers }, "reply")
      .then(
        () => this.#apply(delivery, message, ackOutcome, started),
        (error: unknown) => {
          this.log.error(
            { error, destination },
            "the reply failed to publish; retrying the message",
          );
          this.#retry(delivery, message, this.#backoff(attemptOf(delivery)), started, error, true);
        },
      );
    this.#track(sent);
  }

  // Outcomes and failures.

  #apply(
    delivery: Delivery,
    message: unknown,
    outcome: Outcome,
    started: number,
    error?: unknown,
    handled = true,
  ): void {
    if (delivery.settled) {
      this.#emitOutcome(delivery, message, "settled-by-handler", started, error, handled);
      return;
    }
    switch (outcome.kind) {
      case "ack":
        this.#ack(delivery);
        break;
      case "drop":
        this.#drop(delivery);
        break;
      case "retry": {
        this.#retry(delivery, message, undefined, started, error, handled);
        return;
      }
      case "retry-after": {
        this.#retry(delivery, message, outcome.delayMs, started, error, handled);
        return;
      }
      case "dead-letter":
        this.#deadLetter(delivery, outcome.reason);
        break;
    }
    this.#emitOutcome(delivery, message, outcome.kind, started, error, handled);
  }

  #failed(delivery: Delivery, message: unknown, error: unknown, started: number): void {
    if (delivery.settled) {
      this.log.error({ error }, "the handler failed after settling its delivery");
      this.#emitOutcome(delivery, message, "settled-by-handler", started, error, true);
      return;
    }
    const attempt = attemptOf(delivery);
    this.log.error({ error, attempt, policy: this.#errorPolicy }, "the handler failed");
    switch (this.#errorPolicy) {
      case "retry": {
        // A broker-moved source counts and moves by itself: only its own requeue reaches its cap.
        this.#retry(
          delivery,
          message,
          this.#brokerMoves ? undefined : this.#backoff(attempt),
          started,
          error,
          true,
        );
        return;
      }
      case "drop":
        this.#drop(delivery);
        this.#emitOutcome(delivery, message, "drop", started, error, true);
        return;
      case "dead-letter":
        this.#deadLetter(delivery, "error");
        this.#emitOutcome(delivery, message, "dead-letter", started, error, true);
        return;
      case "fail-fast":
        this.host.failFast(this.name, error);
        this.#emitOutcome(delivery, message, "left-open", started, error, true);
        return;
    }
  }

  #backoff(attempt: number): number {
    return Math.min(this.#backoffMax, this.#backoffInitial * 2 ** Math.max(0, attempt - 1));
  }

  /** Every attempt is spent: dead letter where one is declared, else drop. */
  #giveUp(
    delivery: Delivery,
    message: unknown,
    attempt: number,
    started: number,
    error: unknown,
    handled: boolean,
  ): void {
    if (this.#spec.deadLetter !== undefined) {
      this.#deadLetter(delivery, "max-attempts");
      this.#emitOutcome(delivery, message, "dead-letter", started, error, handled);
      return;
    }
    this.log.error(
      { attempt, position: String(delivery.position) },
      "giving up: maxAttempts reached and no dead letter declared, so the message is dropped",
    );
    this.#drop(delivery);
    this.#emitOutcome(delivery, message, "drop", started, error, handled);
  }

  /** Brings a delivery back now (`delayMs` undefined) or later, within the `maxAttempts` cap. */
  #retry(
    delivery: Delivery,
    message: unknown,
    delayMs: number | undefined,
    started: number,
    error: unknown,
    handled: boolean,
  ): void {
    const attempt = attemptOf(delivery);
    if (!this.#brokerMoves && attempt >= this.#cap) {
      this.#giveUp(delivery, message, attempt, started, error, handled);
      return;
    }
    if (delayMs === undefined) {
      this.#settle(
        () => delivery.nack({ requeue: true }),
        () => this.#copyThenAck(delivery, attempt),
      );
      this.#emitOutcome(delivery, message, "retry", started, error, handled);
      return;
    }
    this.#settle(
      () => delivery.nackAfter(delayMs),
      () => this.#ackThenCopyLater(delivery, attempt, delayMs),
    );
    this.#emitOutcome(delivery, message, "retry-after", started, error, handled);
  }

  #drop(delivery: Delivery): void {
    this.#settle(() => delivery.nack({ requeue: false }), undefined);
  }

  /** Sends the delivery, as it arrived and with its origin, to the declared dead letter. */
  #deadLetter(delivery: Delivery, reason: string): void {
    if (this.#brokerMoves) {
      this.#drop(delivery);
      return;
    }
    const destination = this.#spec.deadLetter;
    if (destination === undefined) {
      this.log.warn(
        { reason },
        "dead-letter asked but no deadLetter() declared; dropping the message",
      );
      this.#drop(delivery);
      return;
    }
    this.host.emit?.({
      type: "dead-letter",
      subscriber: this.name,
      delivery,
      destination,
      reason,
    });
    const sent = this.host.pipeline
      .publish(
        this.#publisher,
        {
          name: destination,
          payload: delivery.payload,
          headers: delivery.headers,
          ...(delivery.partitionKey === undefined ? {} : { partitionKey: delivery.partitionKey }),
          deadLetterOrigin: {
            source: delivery.name,
            position: String(delivery.position),
            reason,
          },
        },
        "dead-letter",
      )
      .then(
        () => this.#ack(delivery),
        (error: unknown) => {
          if (isRustStreamError(error, "publish-refused")) {
            // Refused before it was sent (over the broker's size limit, a header it cannot carry):
            // no later try can succeed, and keeping it would run the handler on it for ever.
            this.log.error(
              { error, destination, reason, position: String(delivery.position) },
              "the dead letter refused the message; dropping it",
            );
            this.#drop(delivery);
            return;
          }
          // Keep the message rather than lose it, and come back slowly rather than spin.
          this.log.error({ error, destination }, "the dead-letter publish failed; retrying later");
          this.#settle(() => delivery.nackAfter(this.#backoffMax), undefined);
        },
      );
    this.#track(sent);
  }

  #copyOf(delivery: Delivery, attempt: number): OutgoingMessage | undefined {
    const address = this.#redeliveryAddress;
    if (address === undefined) {
      this.log.error(
        { source: delivery.name },
        "the broker cannot requeue and the source has no address for a retry copy; dropping the message",
      );
      return undefined;
    }
    return {
      name: address,
      payload: delivery.payload.slice(),
      headers: writeRetryCount(delivery.headers.clone(), attempt),
      ...(delivery.partitionKey === undefined ? {} : { partitionKey: delivery.partitionKey }),
    };
  }

  // Copy first, ack after: a crash in between delivers twice, never zero times.
  #copyThenAck(delivery: Delivery, attempt: number): void {
    const copy = this.#copyOf(delivery, attempt);
    if (copy === undefined) {
      this.#drop(delivery);
      return;
    }
    const sent = this.host.pipeline.publish(this.#publisher, copy, "retry-copy").then(
      () => this.#ack(delivery),
      (error: unknown) => {
        this.log.error({ error }, "the retry copy failed to publish; the delivery stays unsettled");
      },
    );
    this.#track(sent);
  }

  // The original is acked now and the copy published when the delay is over: at most once over the
  // delay window, which is the price of a delay the broker cannot keep.
  #ackThenCopyLater(delivery: Delivery, attempt: number, delayMs: number): void {
    const message = this.#copyOf(delivery, attempt);
    if (message === undefined) {
      this.#drop(delivery);
      return;
    }
    this.#ack(delivery);
    const copy: PendingCopy = {
      message,
      timer: this.host.clock.setTimer(delayMs, () => this.#sendCopy(copy)),
    };
    this.#pendingCopies.add(copy);
  }

  #sendCopy(copy: PendingCopy): void {
    if (!this.#pendingCopies.delete(copy)) return;
    const sent = this.host.pipeline.publish(this.#publisher, copy.message, "retry-copy").then(
      () => {},
      (error: unknown) =>
        this.log.error({ error }, "a delayed retry copy failed to publish; it is lost"),
    );
    this.host.work.track(sent);
  }

  /**
   * Calls one settle verb. A synchronous answer is handled at once; `unsupported` runs `otherwise`;
   * a rejection is logged (the broker keeps the message). A delivery the handler already settled is
   * left alone.
   */
  // The common case without a closure per message: what every successful handler ends in.
  #ack(delivery: Delivery): void {
    let result: SettleResult;
    try {
      result = delivery.ack();
    } catch (error) {
      if (isRustStreamError(error, "already-settled")) return;
      this.log.error({ error }, "settling the delivery failed");
      return;
    }
    if (typeof result !== "string") this.#settle(() => result, undefined);
  }

  #settle(verb: () => SettleResult, otherwise: (() => void) | undefined): void {
    let result: SettleResult;
    try {
      result = verb();
    } catch (error) {
      if (isRustStreamError(error, "already-settled")) return;
      this.log.error({ error }, "settling the delivery failed");
      return;
    }
    if (result === "ok") return;
    if (result === "unsupported") {
      otherwise?.();
      return;
    }
    this.#track(
      result.then(
        (answer) => {
          if (answer === "unsupported") otherwise?.();
        },
        (error: unknown) => {
          if (!isRustStreamError(error, "already-settled")) {
            this.log.error({ error }, "settling the delivery failed");
          }
        },
      ),
    );
  }

  #track(promise: Promise<void>): void {
    this.#settling++;
    this.host.work.begin();
    promise.then(() => {
      this.#settling--;
      this.host.work.end();
      this.#wake();
    });
  }

  #emitOutcome(
    delivery: Delivery,
    message: unknown,
    outcome: SettledAs,
    started: number,
    error: unknown,
    handled: boolean,
  ): void {
    const emit = this.host.emit;
    if (emit === undefined) return;
    emit({
      type: "outcome",
      subscriber: this.name,
      delivery,
      message,
      outcome,
      attempt: attemptOf(delivery),
      durationMs: handled ? this.host.clock.now() - started : 0,
      handled,
      ...(error === undefined ? {} : { error }),
    });
  }

  // Batches.

  #acceptBatch(deliveries: readonly Delivery[]): Awaiting {
    const kept: Delivery[] = [];
    const messages: unknown[] = [];
    const pending: Array<Promise<void>> = [];
    for (const delivery of deliveries) {
      const decoded = this.#decode(delivery);
      if (decoded === FAILED) continue;
      if (decoded instanceof PendingDecode) {
        const index = kept.length;
        kept.push(delivery);
        messages.push(undefined);
        pending.push(
          decoded.promise.then((message) => {
            messages[index] = message;
          }),
        );
        continue;
      }
      kept.push(delivery);
      messages.push(decoded);
    }
    const run = (): Awaiting => {
      const ds: Delivery[] = [];
      const ms: unknown[] = [];
      for (let i = 0; i < kept.length; i++) {
        if (messages[i] === FAILED) continue;
        ds.push(kept[i]!);
        ms.push(messages[i]);
      }
      if (ds.length === 0) return undefined;
      const running = this.#handleBatch(ds, ms);
      if (running === undefined) return undefined;
      this.#active++;
      running.then(() => {
        this.#active--;
        this.#wake();
      });
      return this.#active >= this.#workers ? this.#capacity() : undefined;
    };
    if (pending.length === 0) return run();
    return Promise.all(pending).then(run);
  }

  #handleBatch(deliveries: Delivery[], messages: unknown[]): Promise<void> | undefined {
    const ctx: BatchContext<Readonly<Record<string, OutPublisher<unknown>>>> = {
      name: this.#subscription.name,
      deliveries,
      log: this.log,
      signal: this.host.signal,
      out: this.out,
    };
    const started = this.host.emit === undefined ? 0 : this.host.clock.now();
    const handler = this.#spec.handler as (messages: unknown[], ctx: unknown) => unknown;
    let result: unknown;
    try {
      result = handler(messages, ctx);
    } catch (error) {
      this.#batchFailed(deliveries, messages, error, started);
      return undefined;
    }
    if (!isPromiseLike(result)) {
      this.#finishBatch(deliveries, messages, result, started);
      return undefined;
    }
    const running = Promise.resolve(result).then(
      (value) => this.#finishBatch(deliveries, messages, value, started),
      (error: unknown) => this.#batchFailed(deliveries, messages, error, started),
    );
    this.host.work.track(running);
    return running;
  }

  #finishBatch(
    deliveries: Delivery[],
    messages: unknown[],
    result: unknown,
    started: number,
  ): void {
    if (result === undefined || isOutcome(result)) {
      const outcome = result ?? ackOutcome;
      for (let i = 0; i < deliveries.length; i++) {
        this.#apply(deliveries[i]!, messages[i], outcome, started);
      }
      return;
    }
    if (
      !Array.isArray(result) ||
      result.length !== deliveries.length ||
      !result.every((r) => isOutcome(r))
    ) {
      const error = new RustStreamError(
        "invalid-argument",
        `the batch handler of "${this.name}" returned ${Array.isArray(result) ? `${result.length} outcomes for ${deliveries.length} messages` : "a value that is not an outcome"}: return one outcome, or one per message in order`,
      );
      this.#batchFailed(deliveries, messages, error, started);
      return;
    }
    for (let i = 0; i < deliveries.length; i++) {
      this.#apply(deliveries[i]!, messages[i], result[i] as Outcome, started);
    }
  }

  #batchFailed(deliveries: Delivery[], messages: unknown[], error: unknown, started: number): void {
    for (let i = 0; i < deliveries.length; i++) {
      this.#failed(deliveries[i]!, messages[i], error, started);
    }
  }
}
