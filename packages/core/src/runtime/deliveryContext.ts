import type { Delivery } from "../delivery.js";
import type { ReadonlyHeaderMap } from "../headerMap.js";
import { attemptOf } from "./attempt.js";
import type { HandlerContext } from "./context.js";
import type { OutRecord } from "./dispatchHost.js";
import type { Logger } from "./logger.js";

/** What every context of one subscriber shares. */
export interface ContextShared {
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly out: OutRecord;
}

/**
 * A handler's context: two fields per delivery, everything else read through on demand, so a
 * handler that never looks at it costs one small object.
 */
export class DeliveryContext implements HandlerContext<OutRecord> {
  readonly delivery: Delivery;
  readonly #shared: ContextShared;

  constructor(shared: ContextShared, delivery: Delivery) {
    this.#shared = shared;
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
    return this.#shared.log;
  }
  get signal(): AbortSignal {
    return this.#shared.signal;
  }
  get out(): OutRecord {
    return this.#shared.out;
  }
}
