import type { Delivery } from "../delivery.js";
import { hashKey } from "../keyHash.js";
import type { Logger } from "../logger.js";
import type { Awaiting } from "./dispatchHost.js";
import type { Flow } from "./flow.js";
import type { ErasedKey } from "./subscriberSpec.js";

/** Runs one decoded delivery; a promise while its handler is still running. */
export type Handle = (delivery: Delivery, message: unknown) => Promise<void> | undefined;

interface Lane {
  busy: boolean;
  /** Pairs of delivery and decoded message, flattened. */
  readonly queue: unknown[];
}

/**
 * Concurrency as `workers` asked for it: one at a time, `workers(n)` running side by side, or
 * `workers(n, { key })` with one lane per worker so that deliveries of one key keep their order.
 */
export class Lanes {
  readonly #flow: Flow;
  readonly #handle: Handle;
  readonly #workers: number;
  readonly #prefetch: number;
  readonly #key: ErasedKey | undefined;
  readonly #lanes: Lane[] | undefined;
  readonly #log: Logger;
  #roundRobin = 0;

  constructor(
    flow: Flow,
    handle: Handle,
    options: {
      readonly workers: number;
      readonly prefetch: number;
      readonly key: ErasedKey | undefined;
      readonly log: Logger;
    },
  ) {
    this.#flow = flow;
    this.#handle = handle;
    this.#workers = options.workers;
    this.#prefetch = options.prefetch;
    this.#key = options.key;
    this.#log = options.log;
    this.#lanes =
      options.key === undefined
        ? undefined
        : Array.from({ length: options.workers }, () => ({ busy: false, queue: [] }));
  }

  /** Hands the delivery to a worker; a promise when the pull loop must wait for room. */
  route(delivery: Delivery, message: unknown): Awaiting {
    const lanes = this.#lanes;
    const flow = this.#flow;
    if (lanes === undefined) {
      const running = this.#handle(delivery, message);
      if (running === undefined) return undefined;
      if (this.#workers === 1) return running;
      flow.active++;
      running.then(() => {
        flow.active--;
        flow.wake();
      });
      return flow.active >= this.#workers ? flow.capacity() : undefined;
    }
    const lane = lanes[this.#laneOf(delivery, message)]!;
    if (lane.busy) {
      lane.queue.push(delivery, message);
      flow.queued++;
    } else {
      const running = this.#handle(delivery, message);
      if (running === undefined) return undefined;
      lane.busy = true;
      flow.active++;
      running.then(() => this.#next(lane));
    }
    return flow.active + flow.queued >= this.#prefetch ? flow.capacity() : undefined;
  }

  #next(lane: Lane): void {
    const flow = this.#flow;
    while (lane.queue.length > 0) {
      const delivery = lane.queue.shift() as Delivery;
      const message = lane.queue.shift();
      flow.queued--;
      const running = this.#handle(delivery, message);
      if (running !== undefined) {
        running.then(() => this.#next(lane));
        flow.wake();
        return;
      }
    }
    lane.busy = false;
    flow.active--;
    flow.wake();
  }

  #laneOf(delivery: Delivery, message: unknown): number {
    const key = this.#key;
    let value: string | number | Uint8Array | undefined;
    if (key === "partitionKey") {
      value = delivery.partitionKey;
    } else if (key === "partition") {
      // A partition number is its own spread: lane = partition modulo lanes, no hash needed.
      const partition = delivery.partition;
      if (partition !== undefined) return partition % this.#workers;
    } else if (key !== undefined) {
      try {
        value = key(message);
      } catch (error) {
        this.#log.warn({ error }, "the key function threw; the message goes to the next lane");
      }
    }
    if (value === undefined) return this.#roundRobin++ % this.#workers;
    return hashKey(value) % this.#workers;
  }
}
