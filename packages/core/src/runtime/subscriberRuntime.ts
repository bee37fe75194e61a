import { attemptOf } from "../attempt.js";
import {
  type BacklogCounts,
  reportsBacklog,
  reportsMoves,
  reportsWaits,
  supportsBatches,
} from "../capabilities.js";
import type { Codec } from "../codec/codec.js";
import type { Delivery } from "../delivery.js";
import { headerNames } from "../headerNames.js";
import type { Logger } from "../logger.js";
import type { OutgoingMessage } from "../message.js";
import type { Subscription } from "../subscription.js";
import { BatchDispatch } from "./batchDispatch.js";
import type { HandlerContext } from "./context.js";
import { FAILED, MessageDecoder, PendingDecode } from "./decoding.js";
import { DeliveryContext } from "./deliveryContext.js";
import type { Awaiting, DispatchHost, OutBases, SubscriberWiring } from "./dispatchHost.js";
import { Flow } from "./flow.js";
import { askHandOver } from "./handOver.js";
import { Lanes } from "./lanes.js";
import type { PublishOptions } from "./out.js";
import { ack, isOutcome } from "./outcome.js";
import { isPromiseLike } from "./promiseLike.js";
import { encodedHeaders, type PublishRoute, runtimeMessage } from "./publishing.js";
import { type BrokerMove, Redelivery } from "./redelivery.js";
import { isReply } from "./reply.js";
import { Settlement } from "./settlement.js";
import { Settler } from "./settler.js";
import { defaultMaxAttempts, type SubscriberSpec } from "./subscriberSpec.js";

const ackOutcome = ack();
const noOptions: PublishOptions<unknown> = Object.freeze({});
type Invoke = (message: unknown, ctx: DeliveryContext) => unknown;

/**
 * Runs one subscriber: pulls deliveries in batches, decodes them (decoding.ts), runs the handler on
 * the lanes `workers` asked for (lanes.ts), publishes replies, and settles by outcome and failure
 * policy (settlement.ts, with redelivery.ts for copies and dead letters); a batch handler's dispatch
 * is batchDispatch.ts.
 *
 * The hot path awaits only what really is asynchronous: a pull that found nothing waiting, a handler
 * that returned a promise, a full set of lanes. Synchronous handlers on a broker that settles
 * synchronously run back to back through a pulled batch.
 */
export class SubscriberRuntime {
  readonly name: string;
  readonly host: DispatchHost;
  readonly log: Logger;
  readonly out: OutBases;
  readonly noOuts: boolean;
  readonly group: string | undefined;
  readonly #spec: SubscriberSpec;
  readonly #subscription: Subscription;
  readonly #route: PublishRoute;
  readonly #codec: Codec<unknown>;
  readonly #invoke: Invoke;
  /** The broker applies the cap and the dead letter itself (a broker-moved source with both). */
  readonly #brokerMoves: BrokerMove | undefined;
  readonly #cap: number;
  readonly #prefetch: number;
  readonly #flow = new Flow();
  readonly #settler: Settler;
  readonly #redelivery: Redelivery;
  readonly #settlement: Settlement;
  readonly #decoder: MessageDecoder;
  readonly #lanes: Lanes;
  readonly #batches: BatchDispatch | undefined;
  #stopping = false;
  /** Releases the pull loop's current wait, if it waits: stop() calls it (see #waitOrStop). */
  #releaseWait: (() => void) | undefined;
  #warnedUnreplied = false;
  #pumping: Promise<void> | undefined;

  constructor(host: DispatchHost, wiring: SubscriberWiring) {
    const spec = wiring.spec;
    const source = wiring.source;
    this.host = host;
    this.name = wiring.name;
    this.log = wiring.log;
    this.out = wiring.out;
    this.noOuts = Object.keys(wiring.out).length === 0;
    this.#spec = spec;
    this.#subscription = wiring.subscription;
    this.group = wiring.subscription.group;
    this.#route = wiring.route;
    this.#codec = spec.codec;
    this.#brokerMoves =
      source.copies === "broker" &&
      source.retry?.deadLetter !== undefined &&
      source.retry.maxAttempts !== undefined
        ? { cap: source.retry.maxAttempts, deadLetter: source.retry.deadLetter }
        : undefined;
    this.#cap = spec.maxAttempts ?? defaultMaxAttempts;
    this.#prefetch = spec.batch ?? spec.prefetch ?? 256;
    const backoffMaxMs = spec.failure.backoff?.maxMs ?? 10_000;
    this.#settler = new Settler(this.log, host.work, this.#flow);
    this.#redelivery = new Redelivery(host, this.#settler, {
      subscriber: this.name,
      route: this.#route,
      redeliveryAddress: source.copies === "addressed" ? source.redeliveryAddress : undefined,
      deadLetter: spec.deadLetter,
      brokerMoves: this.#brokerMoves,
      backoffMaxMs,
      log: this.log,
    });
    this.#settlement = new Settlement(host, this.#settler, this.#redelivery, {
      subscriber: this.name,
      log: this.log,
      cap: this.#cap,
      brokerMoves: this.#brokerMoves,
      deadLetter: spec.deadLetter,
      errorPolicy: spec.failure.error ?? "retry",
      decodePolicy: spec.failure.decode ?? (spec.deadLetter !== undefined ? "dead-letter" : "drop"),
      backoffInitialMs: spec.failure.backoff?.initialMs ?? 100,
      backoffMaxMs,
    });
    const subscription = wiring.subscription;
    if (reportsMoves(subscription)) {
      // Messages the broker moved without handing them over are dead letters of this subscriber too.
      const redelivery = this.#redelivery;
      subscription.onMoved((moved, destination, reason) =>
        redelivery.reportBrokerMove(moved, destination, reason),
      );
    }
    const emit = host.emit;
    if (emit !== undefined && reportsWaits(subscription)) {
      // Per message, so only when someone observes.
      const subscriber = this.name;
      subscription.onWaited((waitedMs) => emit({ type: "wait", subscriber, waitedMs }));
    }
    const settlement = this.#settlement;
    this.#decoder = new MessageDecoder(spec.codec, spec.codecs, spec.schema, (delivery, error) =>
      settlement.decodeFailed(delivery, error),
    );
    this.#lanes = new Lanes(this.#flow, (delivery, message) => this.#handle(delivery, message), {
      workers: spec.workers,
      prefetch: this.#prefetch,
      key: spec.key,
      log: this.log,
    });
    this.#batches =
      spec.batch === undefined
        ? undefined
        : new BatchDispatch(host, this.#flow, this.#decoder, settlement, {
            subscriber: this.name,
            name: this.#subscription.name,
            group: this.group,
            handler: spec.handler as (messages: unknown[], ctx: unknown) => unknown,
            workers: spec.workers,
            log: this.log,
            out: this.out,
          });
    this.#invoke = this.#compose(spec.handler as (message: unknown, ctx: unknown) => unknown);
  }

  readonly #inFlight = (): number => this.#settlement.inHandler;
  /** The source's backlog, where its broker answers it; absent from the events otherwise. */
  #backlog(): { backlog?: () => Promise<BacklogCounts> } {
    const subscription = this.#subscription;
    return reportsBacklog(subscription) ? { backlog: () => subscription.backlog() } : {};
  }

  /** What every handler context of this subscriber reads through. */
  get signal(): AbortSignal {
    return this.host.signal;
  }

  /** Starts pulling. */
  start(): void {
    this.#pumping = this.#pump();
    this.host.emit?.({
      type: "subscription",
      subscriber: this.name,
      state: "started",
      inFlight: this.#inFlight,
      ...this.#backlog(),
    });
  }

  /**
   * Stops pulling and returns what was pulled but never handed to the handler. Resolves once the
   * pull loop has ended; handlers still running keep running (the app drains them).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#releaseWait?.();
    this.#flow.wake();
    try {
      await this.#subscription.close();
    } catch (error) {
      this.log.warn({ error }, "closing the subscription failed");
    }
    await this.#pumping;
  }

  /** Publishes every copy still waiting for its delay now, so none is lost to the shutdown. */
  flushCopies(): void {
    this.#redelivery.flush();
  }

  // The pull loop.

  async #pump(): Promise<void> {
    const subscription = this.#subscription;
    const batched = supportsBatches(subscription);
    const flow = this.#flow;
    try {
      while (!this.#stopping) {
        let deliveries: readonly Delivery[];
        if (batched) {
          deliveries = await subscription.nextBatch(this.#prefetch);
        } else {
          const next = await subscription.next();
          deliveries = next.done ? [] : [next.value];
        }
        if (deliveries.length === 0) {
          // Ended by the broker, not by stop(): nothing more comes, so the app is not ready.
          if (!this.#stopping) this.#ended(undefined);
          return;
        }
        if (this.#batches !== undefined) {
          const wait = this.#batches.accept(deliveries);
          if (wait !== undefined) await this.#waitOrStop(wait);
          continue;
        }
        for (let i = 0; i < deliveries.length; i++) {
          if (this.#stopping) {
            this.#giveBack(deliveries, i);
            return;
          }
          const wait = this.#accept(deliveries[i]!);
          if (wait !== undefined) await this.#waitOrStop(wait);
        }
        // Replies and settles still waiting on the broker hold back the next pull.
        while (flow.settling >= this.#prefetch && !this.#stopping) await flow.capacity();
      }
    } catch (error) {
      if (this.#stopping) return;
      this.log.error({ error }, "the subscription failed; stopping the app");
      this.#ended(error);
      this.host.failFast(this.name, error);
    }
  }

  /**
   * Waits for `wait` (a handler, room in the lanes) or for stop(), whichever comes first: a pull
   * loop waiting on a handler that never returns is released by stop(). Not a race with one promise
   * that stop() resolves: each race would leave a reaction on that promise until the stop, one per
   * delivery waited for, so a subscriber's memory would grow with every message it handled (issue
   * 26; packages/redis/test/backlogMemory.test.ts saw ~300 bytes a message). The loop waits on one
   * thing at a time, so one release slot is enough, and it is cleared when the wait ends.
   */
  #waitOrStop(wait: Promise<void>): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const done = (): void => {
        this.#releaseWait = undefined;
        resolve();
      };
      this.#releaseWait = done;
      wait.then(done, (error: unknown) => {
        this.#releaseWait = undefined;
        reject(error);
      });
    });
  }

  #ended(error: unknown): void {
    if (error === undefined) {
      this.log.warn("the subscription ended: the broker delivers nothing more to this subscriber");
    }
    this.host.emit?.({
      type: "subscription",
      subscriber: this.name,
      state: "ended",
      inFlight: this.#inFlight,
      ...(error === undefined ? {} : { error }),
    });
  }

  // Pulled ahead but never handled: back to the broker, so nothing read ahead is lost.
  #giveBack(deliveries: readonly Delivery[], from: number): void {
    for (let i = from; i < deliveries.length; i++) {
      const delivery = deliveries[i]!;
      this.#settler.settle(() => delivery.nack({ requeue: true }), undefined);
    }
  }

  #accept(delivery: Delivery): Awaiting {
    // Past the cap, a delivery came back unsettled after its last attempt (its consumer died
    // mid-handler): it has had every attempt the mount allows, so it is not handled again. Where
    // the broker keeps the cap, its own count never brings a delivery past it, but a copy's retry
    // count can (a wait queue's copy the server counts afresh): giving up there is a drop, which
    // such a broker answers by moving the message to its dead letter.
    const attempt = attemptOf(delivery);
    if (attempt > this.#cap) {
      const started = this.host.emit === undefined ? 0 : this.host.clock.now();
      this.#settlement.giveUp(delivery, undefined, attempt, started, undefined, false);
      return undefined;
    }
    const decoded = this.#decoder.decode(delivery);
    if (decoded === FAILED) return undefined;
    if (decoded instanceof PendingDecode) {
      return decoded.promise.then((message) =>
        message === FAILED ? undefined : this.#lanes.route(delivery, message),
      );
    }
    return this.#lanes.route(delivery, decoded);
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

  /**
   * Runs the handler on `delivery` and counts what runs on past this call in the app's work, here
   * and only here: a delivery the broker hands over after a wait is one piece of work from the wait
   * to its outcome, not one for the wait and one more for its handler.
   */
  #handle(delivery: Delivery, message: unknown): Promise<void> | undefined {
    // The broker may hold the handler back, or take the delivery back unhandled (`handOver`).
    const turn = askHandOver(delivery, this.log);
    const running =
      turn === undefined
        ? this.#run(delivery, message)
        : turn.then((go) => (go ? this.#run(delivery, message) : undefined));
    if (running !== undefined) this.host.work.track(running);
    return running;
  }

  /** The handler's run: its promise when it returned one (#handle counts it), else settled. */
  #run(delivery: Delivery, message: unknown): Promise<void> | undefined {
    const ctx = new DeliveryContext(this, delivery);
    this.#settlement.inHandler++;
    const started = this.host.emit === undefined ? 0 : this.host.clock.now();
    let result: unknown;
    try {
      result = this.#invoke(message, ctx);
    } catch (error) {
      this.#settlement.failed(delivery, message, error, started);
      return undefined;
    }
    if (!isPromiseLike(result)) {
      this.#finish(delivery, message, result, started);
      return undefined;
    }
    return Promise.resolve(result).then(
      (value) => this.#finish(delivery, message, value, started),
      (error: unknown) => this.#settlement.failed(delivery, message, error, started),
    );
  }

  /** What the handler returned: nothing (ack), an outcome, or a reply to publish, then ack. */
  #finish(delivery: Delivery, message: unknown, result: unknown, started: number): void {
    const settlement = this.#settlement;
    if (result === undefined) {
      settlement.apply(delivery, message, ackOutcome, started);
      return;
    }
    if (isOutcome(result)) {
      settlement.apply(delivery, message, result, started);
      return;
    }
    const declared = this.#spec.reply;
    if (declared === undefined) {
      if (!this.#warnedUnreplied) {
        this.#warnedUnreplied = true;
        this.log.warn(
          "the handler returned a value but the subscriber declares no reply(); it is dropped",
        );
      }
      settlement.apply(delivery, message, ackOutcome, started);
      return;
    }
    const destination = declared.destination ?? delivery.headers.getString(headerNames.replyTo);
    if (destination === undefined || destination === "") {
      this.log.warn(
        { position: String(delivery.position) },
        "no reply-to on the message, so the reply goes nowhere",
      );
      settlement.apply(delivery, message, ackOutcome, started);
      return;
    }
    const wrapped = isReply(result);
    const options = wrapped ? result.options : noOptions;
    let payload: Uint8Array;
    try {
      payload = this.#codec.encode(wrapped ? result.value : result);
    } catch (error) {
      settlement.failed(delivery, message, error, started);
      return;
    }
    const headers = encodedHeaders(this.#codec, options.headers);
    const correlation = delivery.headers.get(headerNames.correlationId);
    if (correlation !== undefined) headers.set(headerNames.correlationId, correlation);
    // Erased here: the options' type was checked where the handler was typed against its broker.
    const reply = runtimeMessage(
      destination,
      payload,
      headers,
      options,
      delivery,
    ) as OutgoingMessage;
    // Counted here and ended in the publish's own callbacks rather than through `track`: one
    // promise per reply fewer.
    const settler = this.#settler;
    settler.started();
    this.host.pipeline.publish(this.#route, reply, "reply").then(
      () => {
        try {
          settlement.apply(delivery, message, ackOutcome, started);
        } finally {
          settler.finished();
        }
      },
      (error: unknown) => {
        try {
          this.log.error(
            { error, destination },
            "the reply failed to publish; retrying the message",
          );
          const delay = settlement.backoff(attemptOf(delivery));
          settlement.retry(delivery, message, delay, started, error, true);
        } finally {
          settler.finished();
        }
      },
    );
  }
}
