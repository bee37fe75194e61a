import type { Delivery } from "../delivery.js";
import type { Logger } from "../logger.js";

/**
 * Asks `delivery`'s broker to hand it over (`Delivery.handOver`), told the batch it travels with
 * when it is one's. `undefined` when the broker does not ask to be asked: the handler runs at once.
 * A broker that fails to answer is logged and the delivery counts as taken back: unhandled and
 * unsettled, as the broker keeps it (one answer for single deliveries and batches alike).
 */
export function askHandOver(
  delivery: Delivery,
  log: Logger,
  batch?: readonly Delivery[],
): Promise<boolean> | undefined {
  const turn = batch === undefined ? delivery.handOver?.() : delivery.handOver?.(batch);
  return turn?.catch((error: unknown) => {
    log.error({ error }, "the broker failed to hand the delivery over; it is not handled");
    return false;
  });
}
