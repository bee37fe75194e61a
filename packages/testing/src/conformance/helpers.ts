// What the conformance scenarios share beyond the helpers of the main entry (../helpers/, which
// users' tests import from @ruststream/testing).
import type { Delivery, Publisher, Subscription } from "@ruststream/core";
import { bytes, text } from "../helpers/payloadText.js";
import { sleep } from "../helpers/sleep.js";
import { within } from "../helpers/within.js";

/**
 * Runs `work` in a later macrotask, after the code that scheduled it has returned. This is the
 * Node counterpart of RustStream's "foreign runtime": a settle or publish that happens outside the
 * call chain that received the message must work the same.
 */
export function elsewhere<T>(work: () => T | Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      Promise.resolve().then(work).then(resolve, reject);
    }, 0);
  });
}

/**
 * The same promise, its rejection already handled: for a reply awaited only after other steps, so
 * that when one of those fails first the scenario reports that failure, not an unhandled rejection.
 */
export function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Polls `condition` until it holds; fails naming `step` after `ms`. */
export async function waitUntil(ms: number, step: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${step}: still waiting after ${ms} ms`);
    await sleep(2);
  }
}

/** The next delivery, or a failure naming `step` when there is none in time or the source ended. */
export async function nextDelivery<TDelivery extends Delivery>(
  subscription: Subscription<TDelivery>,
  ms: number,
  step: string,
): Promise<TDelivery> {
  const next = await within(ms, step, subscription.next());
  if (next.done) throw new Error(`${step}: the subscription ended`);
  return next.value;
}

/**
 * Pulls a subscription in the background and keeps what arrives. Assertions then wait on the list,
 * so a scenario that expects silence never leaves a pull behind that would steal a later message.
 */
export class Collector<TDelivery extends Delivery = Delivery> {
  readonly items: TDelivery[] = [];
  readonly #subscription: Subscription<TDelivery>;
  readonly #done: Promise<void>;
  #error: unknown;
  #wake: (() => void) | undefined;

  constructor(subscription: Subscription<TDelivery>) {
    this.#subscription = subscription;
    this.#done = this.#run();
  }

  /** Why the pull loop stopped, if it failed. */
  get error(): unknown {
    return this.#error;
  }

  /** Waits until at least `count` deliveries have arrived in total. */
  async waitFor(count: number, ms: number, step: string): Promise<TDelivery[]> {
    const deadline = Date.now() + ms;
    while (this.items.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`${step}: ${this.items.length} of ${count} deliveries after ${ms} ms`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.items.slice(0, count);
  }

  /** Waits `ms` and fails, naming `step`, if the total grew past `expected`. */
  async quiet(expected: number, ms: number, step: string): Promise<void> {
    await sleep(ms);
    if (this.items.length > expected) {
      const extra = this.items.slice(expected).map((d) => text(d.payload));
      throw new Error(`${step}: expected no more deliveries, got ${JSON.stringify(extra)}`);
    }
  }

  async stop(): Promise<void> {
    await this.#subscription.close();
    await this.#done;
  }

  async #run(): Promise<void> {
    try {
      for (;;) {
        const next = await this.#subscription.next();
        if (next.done) return;
        this.items.push(next.value);
        this.#wake?.();
      }
    } catch (error) {
      this.#error = error;
    }
  }
}

/**
 * Publishes a sentinel to `name` after everything else and waits until `count` copies of it reached
 * the collectors together (one per subscription it fans out to). Whatever was on its way to them
 * before it has then had its chance: proof that nothing came which does not rest on how long a quiet
 * spell lasted. Only sentinels that arrive after this call count, so one collector can take several.
 */
export async function sentinelsThrough(
  publisher: Publisher<never>,
  collectors: readonly Collector[],
  name: string,
  count: number,
  ms: number,
  step: string,
): Promise<void> {
  const from = collectors.map((c) => c.items.length);
  await publisher.publish({ name, payload: bytes("sentinel") });
  const arrived = () =>
    collectors.reduce((sum, c, i) => sum + c.items.slice(from[i]).filter(isSentinel).length, 0);
  await waitUntil(ms, `${step}: reading to the sentinel`, () => arrived() >= count);
}

/** Whether a delivery is a sentinel of {@link sentinelsThrough}. */
export function isSentinel(delivery: Delivery): boolean {
  return text(delivery.payload) === "sentinel";
}

/**
 * {@link sentinelsThrough} on one collector: returns every payload it holds up to the new sentinel,
 * that sentinel last.
 */
export async function throughSentinel(
  publisher: Publisher<never>,
  collector: Collector,
  name: string,
  ms: number,
  step: string,
): Promise<string[]> {
  const from = collector.items.length;
  await sentinelsThrough(publisher, [collector], name, 1, ms, step);
  const at = collector.items.findIndex((d, i) => i >= from && isSentinel(d));
  return collector.items.slice(0, at + 1).map((d) => text(d.payload));
}

/** Settles with `ack()` and waits if the broker settles asynchronously. */
export async function ackAll(deliveries: readonly Delivery[]): Promise<void> {
  for (const d of deliveries) if (!d.settled) await d.ack();
}
