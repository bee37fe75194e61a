import { RustStreamError } from "./errors.js";
import type { ReadonlyHeaderMap } from "./headerMap.js";
import { deliveryMark } from "./marks.js";
import type { Position } from "./position.js";

/**
 * A broker's honest answer to a settle call.
 *
 * - `ok`: done. From `nack({ requeue: true })` or `nackAfter` it is a promise that the message comes
 *   back.
 * - `unsupported`: the broker cannot do this, so nothing happened and the delivery is still open: the
 *   caller may settle it another way (for example republish a copy, then ack).
 *
 * A broker failure is neither: the call rejects.
 */
export type SettleAnswer = "ok" | "unsupported";

/**
 * Settling answers synchronously where the broker can (in memory, or a log that only records an
 * offset), so a hot loop pays for an `await` only when the broker really waits.
 */
export type SettleResult = SettleAnswer | Promise<SettleAnswer>;

export interface NackOptions {
  /** `true`: bring the message back. `false`: drop it (a broker with its own dead letter applies it). */
  readonly requeue: boolean;
}

/** One delivery of a message to a subscription. */
export interface Delivery<TPosition extends Position = Position> {
  readonly [deliveryMark]: true;
  /** The topic, stream or queue it came from. */
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  readonly partitionKey: Uint8Array | undefined;
  /**
   * The broker partition it came from (a Kafka partition, a Pulsar partition's index), where the
   * source has partitions (`Source.partitions`); `undefined` elsewhere.
   */
  readonly partition: number | undefined;
  /**
   * Why the broker could not read this message into a payload (an entry without the payload field,
   * written by another framework), or `undefined` when it could. The runtime then settles it by the
   * subscriber's decode policy without running the codec or the handler: an unreadable message is
   * never handed over as an empty payload.
   */
  readonly decodeError: Error | undefined;
  /**
   * How many times the broker has delivered it, this time included (1 on the first delivery), where
   * the broker counts. Where present it is the only count a `maxAttempts` cap reads.
   */
  readonly redeliveryCount: number | undefined;
  readonly position: TPosition;
  /** True once a settle call answered `ok` or failed. */
  readonly settled: boolean;
  /**
   * For a broker that may take a delivery back unhandled after handing it over (a queue row held
   * behind an earlier row of its key whose settle failed): the runtime calls it right before the
   * handler would run, and runs the handler only once it answers `true`. `false`: the broker took
   * the delivery back, so the runtime neither handles nor settles it. `undefined` (or no method):
   * the handler runs at once.
   *
   * For a batch handler the runtime asks each delivery of the batch, in order, before the handler
   * runs, passing `batch`: the deliveries handed to that handler together, this one among them. They
   * settle only after the handler, so a broker that waits for earlier deliveries handed over before
   * this one must not wait for those of `batch`. The handler then runs on the deliveries answered
   * `true` (or `undefined`), in order; one answered `false` is left out of the batch, and a batch
   * left with none is not run. Without `batch` the delivery is handed to a handler of its own.
   */
  handOver?(batch?: readonly Delivery[]): Promise<boolean> | undefined;
  ack(): SettleResult;
  nack(options: NackOptions): SettleResult;
  /** Requeue after a delay; `unsupported` where the broker has no delayed redelivery. */
  nackAfter(ms: number): SettleResult;
}

// A settle call as one number: these codes, or a delay of 0 or more for `nackAfter(delay)`.
const ACK = -1;
const REQUEUE = -2;
const DROP = -3;

function describe(verb: number): string {
  switch (verb) {
    case ACK:
      return "ack()";
    case REQUEUE:
      return "nack({ requeue: true })";
    case DROP:
      return "nack({ requeue: false })";
    default:
      return `nackAfter(${verb})`;
  }
}

const OPEN = 0;
const SETTLING = 1;
const SETTLED = 2;

/**
 * The base every broker's delivery extends, so each one enforces the same rules: a second settle
 * throws, `unsupported` leaves the delivery open, a broker failure (even a synchronous throw) rejects.
 * A subclass implements the three verbs and nothing else.
 */
export abstract class DeliveryBase<TPosition extends Position = Position>
  implements Delivery<TPosition>
{
  // On the prototype (below), not a field: one less slot in every delivery.
  declare readonly [deliveryMark]: true;
  abstract readonly name: string;
  abstract readonly payload: Uint8Array;
  abstract readonly headers: ReadonlyHeaderMap;
  abstract readonly partitionKey: Uint8Array | undefined;
  abstract readonly redeliveryCount: number | undefined;
  abstract readonly position: TPosition;
  /** A broker without partitions keeps this; one with them overrides it. */
  get partition(): number | undefined {
    return undefined;
  }

  /** Readable by default; a broker that meets a message it cannot read overrides it. */
  get decodeError(): Error | undefined {
    return undefined;
  }
  #state = OPEN;
  // What settled it, for the error a second settle throws: a number, not a string or a closure
  // built on every settle.
  #verb = ACK;

  get settled(): boolean {
    return this.#state === SETTLED;
  }

  ack(): SettleResult {
    return this.#settle(ACK);
  }

  nack(options: NackOptions): SettleResult {
    return this.#settle(options.requeue ? REQUEUE : DROP);
  }

  nackAfter(ms: number): SettleResult {
    if (!Number.isFinite(ms) || ms < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `nackAfter(${ms}): the delay must be a finite number of milliseconds, 0 or more`,
      );
    }
    return this.#settle(ms);
  }

  protected abstract settleAck(): SettleResult;
  protected abstract settleNack(requeue: boolean): SettleResult;
  /** Brokers without delayed redelivery keep this default. */
  protected settleNackAfter(_ms: number): SettleResult {
    return "unsupported";
  }

  #settle(verb: number): SettleResult {
    if (this.#state !== OPEN) {
      throw new RustStreamError(
        "already-settled",
        `${describe(verb)} on a delivery of "${this.name}" that was already settled with ` +
          `${describe(this.#verb)}: settle each delivery once (a handler that ` +
          "returns an outcome leaves settling to the runtime)",
      );
    }
    this.#state = SETTLING;
    this.#verb = verb;
    let result: SettleResult;
    try {
      result =
        verb === ACK
          ? this.settleAck()
          : verb >= 0
            ? this.settleNackAfter(verb)
            : this.settleNack(verb === REQUEUE);
    } catch (error) {
      this.#state = SETTLED;
      return Promise.reject(error);
    }
    if (typeof result === "string") {
      this.#state = result === "ok" ? SETTLED : OPEN;
      return result;
    }
    return result.then(
      (answer) => {
        this.#state = answer === "ok" ? SETTLED : OPEN;
        return answer;
      },
      (error: unknown) => {
        this.#state = SETTLED;
        throw error;
      },
    );
  }
}

Object.defineProperty(DeliveryBase.prototype, deliveryMark, { value: true });
