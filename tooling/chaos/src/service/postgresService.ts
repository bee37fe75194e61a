// The service's PostgreSQL side: one queue in the scenario's table, claimed by every replica with
// leases (`FOR UPDATE SKIP LOCKED`), each key in order (`keyOrder`, the default) but under a retry
// plan. With a retry plan
// the runtime declares the cap and the dead letter to the queue, which moves a failing row to the
// dead letter's queue in the same table, keeping its id (the dead letter's name at every read).
// A transactional queue's handler writes a business row in the claim's transaction before it
// reports its handling; the ack keeps the row (marked done), so the runner can match the two.
import type { HandlerContext, Outcome, RustStream, SubscriberBuilder } from "@ruststream/core";
import { PostgresBroker, PostgresQueue, transactionOf } from "@ruststream/postgres";
import { asBody } from "./body.js";
import {
  POSTGRES_BUSINESS_TABLE,
  POSTGRES_CLAIM,
  POSTGRES_LEASE_MS,
  POSTGRES_POOL_SIZE,
  POSTGRES_PREFETCH,
  POSTGRES_TABLE,
} from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";

/** The business row, in the claim's transaction (the runner made the table: postgresBusiness.ts). */
const insertBusinessRow = `INSERT INTO ${POSTGRES_BUSINESS_TABLE} (queue, row_id, k, seq) VALUES ($1, $2::bigint, $3, $4)`;

type Handle = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

/**
 * A transactional handler's cap. Every failure here is a fault's (a cut connection fails the
 * insert, a killed replica's row comes back when its lease ends, each claim an attempt), never the
 * message's: the runtime's default cap (3) would drop a row three faults caught, which a
 * deployment would dead-letter instead; the scenario has no dead letter, so nothing may reach it.
 */
const TRANSACTIONAL_ATTEMPTS = 1_000;

export function mountPostgres(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: PostgresQueue) => SubscriberBuilder<unknown>,
    source: (queue: string) => PostgresQueue,
  ) => void,
  handle: Handle,
): void {
  const transactional = config.transactional === true;
  if (transactional && config.retry !== undefined) {
    throw new Error("a transactional PostgreSQL scenario with a retry plan is not built");
  }
  // The retry scenario checks no order and runs without `keyOrder`; its `-keyorder` variant with.
  const source = (queue: string) =>
    new PostgresQueue(queue, {
      claim: POSTGRES_CLAIM,
      leaseMs: POSTGRES_LEASE_MS,
      keyOrder: config.keyOrder ?? config.retry === undefined,
      ...(transactional ? { transactional: true, ack: "keep" } : {}),
    });
  const broker = new PostgresBroker({
    url: config.address,
    poolSize: POSTGRES_POOL_SIZE,
    table: POSTGRES_TABLE,
    ensureSchema: true,
  });
  app.broker(broker, (b) => {
    const subscriber = (s: PostgresQueue) => b.subscriber(s).prefetch(POSTGRES_PREFETCH);
    if (!transactional) {
      declare(subscriber, source);
      return;
    }
    subscriber(source(config.key))
      .maxAttempts(TRANSACTIONAL_ATTEMPTS)
      .handle(async (message, ctx) => {
        const body = asBody(message);
        // Before the handling's line: a line printed means the business row is in the
        // transaction, and the checker counts it written once the row is acked.
        await transactionOf(ctx.delivery).query(insertBusinessRow, [
          config.key,
          String(ctx.delivery.position),
          body.k,
          body.s,
        ]);
        return handle(message, ctx);
      });
  });
}
