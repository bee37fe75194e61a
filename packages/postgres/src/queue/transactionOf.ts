import { type Delivery, RustStreamError } from "@ruststream/core";
import type { Queryable } from "../client/driver.js";

/** Whether `delivery` carries a claim's transaction (a transactional queue's delivery). */
export function heldTransactionOf(delivery: Delivery | undefined): Queryable | undefined {
  if (delivery === undefined || !("tx" in delivery)) return undefined;
  const tx = (delivery as { readonly tx: unknown }).tx;
  return typeof tx === "object" && tx !== null && "query" in tx ? (tx as Queryable) : undefined;
}

/**
 * The transaction a transactional handler writes in: the claim's, which the settle commits, so the
 * handler's writes and the row's ack commit together, or roll back together with a retry.
 * `transactionOf(ctx.delivery).query("INSERT ...", [...])`. Throws on a delivery of a queue that
 * is not `transactional`.
 */
export function transactionOf(delivery: Delivery): Queryable {
  const tx = heldTransactionOf(delivery);
  if (tx === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `transactionOf(): the delivery from "${delivery.name}" holds no transaction: subscribe with new PostgresQueue("${delivery.name}", { transactional: true })`,
    );
  }
  return tx;
}
