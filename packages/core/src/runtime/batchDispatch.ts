import type { Delivery } from "../delivery.js";
import { RustStreamError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { BatchContext } from "./context.js";
import { FAILED, type MessageDecoder, PendingDecode } from "./decoding.js";
import type { Awaiting, DispatchHost, OutBases, OutRecord } from "./dispatchHost.js";
import type { Flow } from "./flow.js";
import { askHandOver } from "./handOver.js";
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
 * policy), each delivery's broker asked to hand it over (the ones it takes back left out), handed
 * to the handler together, and settled by one outcome for all or one per message.
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
      const running = this.#handOver(ds, ms);
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

  /**
   * Asks each delivery's broker to hand it over (`Delivery.handOver`, told the batch it travels
   * with), then runs the handler on those it handed over, in order: one it took back is neither
   * handled nor settled, and a batch left with none is not run. Counts what runs on past this call
   * in the app's work, the wait included, once.
   */
  #handOver(deliveries: Delivery[], messages: unknown[]): Promise<void> | undefined {
    let turns: Array<Promise<boolean> | undefined> | undefined;
    for (let i = 0; i < deliveries.length; i++) {
      const turn = askHandOver(deliveries[i]!, this.#options.log, deliveries);
      if (turn === undefined) continue;
      turns ??= new Array<Promise<boolean> | undefined>(deliveries.length);
      turns[i] = turn;
    }
    let running: Promise<void> | undefined;
    if (turns === undefined) {
      running = this.#handle(deliveries, messages);
    } else {
      const asked = turns;
      const answers = deliveries.map((_, i) => asked[i] ?? true);
      running = Promise.all(answers).then((go) => {
        const ds: Delivery[] = [];
        const ms: unknown[] = [];
        for (let i = 0; i < deliveries.length; i++) {
          if (!go[i]) continue;
          ds.push(deliveries[i]!);
          ms.push(messages[i]);
        }
        return ds.length === 0 ? undefined : this.#handle(ds, ms);
      });
    }
    if (running !== undefined) this.#host.work.track(running);
    return running;
  }

  /** The handler's run: its promise when it returned one (#handOver counts it), else settled. */
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
    return Promise.resolve(result).then(
      (value) => this.#finish(deliveries, messages, value, started),
      (error: unknown) => this.#failed(deliveries, messages, error, started),
    );
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
