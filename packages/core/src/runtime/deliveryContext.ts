import { attemptOf } from "../attempt.js";
import type { Delivery } from "../delivery.js";
import type { ReadonlyHeaderMap } from "../headerMap.js";
import type { Logger } from "../logger.js";
import type { HandlerContext } from "./context.js";
import type { OutBases, OutRecord } from "./dispatchHost.js";

/** What every context of one subscriber shares. */
export interface ContextShared {
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly out: OutBases;
  /** The subscription's consumer group, if it reads in one. */
  readonly group: string | undefined;
  /** True when `.publishes({ ... })` declared nothing, so `out` is the shared empty record. */
  readonly noOuts: boolean;
}

const none: OutRecord = Object.freeze({});

/**
 * A handler's context: two fields per delivery, everything else read through on demand, so a
 * handler that never looks at it costs one small object.
 */
export class DeliveryContext implements HandlerContext<OutRecord, unknown> {
  readonly delivery: Delivery;
  readonly #shared: ContextShared;
  #out: OutRecord | undefined;

  constructor(shared: ContextShared, delivery: Delivery) {
    this.#shared = shared;
    this.delivery = delivery;
  }
  get name(): string {
    return this.delivery.name;
  }
  get group(): string | undefined {
    return this.#shared.group;
  }
  get headers(): ReadonlyHeaderMap {
    return this.delivery.headers;
  }
  get attempt(): number {
    return attemptOf(this.delivery);
  }
  get log(): Logger {
    return this.#shared.log;
  }
  get signal(): AbortSignal {
    return this.#shared.signal;
  }
  /** Bound to this delivery on first use, so a handler that publishes nothing pays nothing. */
  get out(): OutRecord {
    if (this.#out !== undefined) return this.#out;
    const shared = this.#shared;
    if (shared.noOuts) return none;
    const bound: Record<string, OutRecord[string]> = {};
    for (const key in shared.out) bound[key] = shared.out[key]!.bind(this.delivery);
    this.#out = bound;
    return bound;
  }
}
