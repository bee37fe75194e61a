import type { Delivery } from "../delivery.js";
import { RustStreamError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { BatchContext } from "./context.js";
import { FAILED, type MessageDecoder, PendingDecode } from "./decoding.js";
import type { Awaiting, DispatchHost, OutBases, OutRecord } from "./dispatchHost.js";
import type { Flow } from "./flow.js";
import { ack, isOutcome, type Outcome } from "./outcome.js";
import { isPromiseLike } from "./promiseLike.js";
import type { Settlement } from "./settlement.js";

const ackOutcome = ack();

/** What a batch subscriber's dispatch is built from. */
export interface BatchDispatchOptions {
  readonly subscriber: string;
  /** The subscription's name, as the batch context reports it. */
  readonly name: string;
  /** The subscription's consumer group, as the batch context reports it. */
  readonly group: string | undefined;
  readonly handler: (messages: unknown[], ctx: unknown) => unknown;
  readonly workers: number;
  readonly log: Logger;
  readonly out: OutBases;
}

/**
 * A batch handler's dispatch: each pulled batch decoded (failures settled apart, by the decode
 * policy), handed over whole, and settled by one outcome for all or one per message.
 */
export class BatchDispatch {
  readonly #host: DispatchHost;
  readonly #flow: Flow;
  readonly #decoder: MessageDecoder;
  readonly #settlement: Settlement;
  readonly #options: BatchDispatchOptions;
  readonly #invoke: (messages: unknown[], ctx: BatchContext<OutRecord, unknown>) => unknown;

  constructor(
    host: DispatchHost,
    flow: Flow,
    decoder: MessageDecoder,
    settlement: Settlement,
    options: BatchDispatchOptions,
  ) {
    this.#host = host;
    this.#flow = flow;
    this.#decoder = decoder;
    this.#settlement = settlement;
    this.#options = options;
    let invoke = options.handler;
    const layers = host.consumeBatch;
    for (let i = layers.length - 1; i >= 0; i--) {
      const layer = layers[i]!;
      const next = invoke;
      invoke = (messages, ctx) =>
        layer(messages, ctx as BatchContext<Readonly<Record<string, never>>>, () =>
          next(messages, ctx),
        );
    }
    this.#invoke = invoke;
  }

  /** Decodes a pulled batch and runs the handler on it; a promise when the pull must wait. */
  accept(deliveries: readonly Delivery[]): Awaiting {
    const kept: Delivery[] = [];
    const messages: unknown[] = [];
    const pending: Array<Promise<void>> = [];
    for (const delivery of deliveries) {
      const decoded = this.#decoder.decode(delivery);
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
      const running = this.#handle(ds, ms);
      if (running === undefined) return undefined;
      const flow = this.#flow;
      flow.active++;
      running.then(() => {
        flow.active--;
        flow.wake();
      });
      return flow.active >= this.#options.workers ? flow.capacity() : undefined;
    };
    if (pending.length === 0) return run();
    return Promise.all(pending).then(run);
  }

  #handle(deliveries: Delivery[], messages: unknown[]): Promise<void> | undefined {
    const ctx: BatchContext<OutRecord, unknown> = {
      name: this.#options.name,
      group: this.#options.group,
      deliveries,
      log: this.#options.log,
      signal: this.#host.signal,
      out: this.#options.out,
    };
    this.#settlement.inHandler += deliveries.length;
    const started = this.#host.emit === undefined ? 0 : this.#host.clock.now();
    let result: unknown;
    try {
      result = this.#invoke(messages, ctx);
    } catch (error) {
      this.#failed(deliveries, messages, error, started);
      return undefined;
    }
    if (!isPromiseLike(result)) {
      this.#finish(deliveries, messages, result, started);
      return undefined;
    }
    const running = Promise.resolve(result).then(
      (value) => this.#finish(deliveries, messages, value, started),
      (error: unknown) => this.#failed(deliveries, messages, error, started),
    );
    this.#host.work.track(running);
    return running;
  }

  #finish(deliveries: Delivery[], messages: unknown[], result: unknown, started: number): void {
    const settlement = this.#settlement;
    if (result === undefined || isOutcome(result)) {
      const outcome = result ?? ackOutcome;
      for (let i = 0; i < deliveries.length; i++) {
        settlement.apply(deliveries[i]!, messages[i], outcome, started);
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
        `the batch handler of "${this.#options.subscriber}" returned ${Array.isArray(result) ? `${result.length} outcomes for ${deliveries.length} messages` : "a value that is not an outcome"}: return one outcome, or one per message in order`,
      );
      this.#failed(deliveries, messages, error, started);
      return;
    }
    for (let i = 0; i < deliveries.length; i++) {
      settlement.apply(deliveries[i]!, messages[i], result[i] as Outcome, started);
    }
  }

  #failed(deliveries: Delivery[], messages: unknown[], error: unknown, started: number): void {
    for (let i = 0; i < deliveries.length; i++) {
      this.#settlement.failed(deliveries[i]!, messages[i], error, started);
    }
  }
}
