// The service's PostgreSQL side: one queue in the scenario's table, claimed by every replica with
// leases (`FOR UPDATE SKIP LOCKED`), each key in order (`keyOrder`, the default) but under a retry
// plan. With a retry plan
// the runtime declares the cap and the dead letter to the queue, which moves a failing row to the
// dead letter's queue in the same table, keeping its id (the dead letter's name at every read).
import type { RustStream, SubscriberBuilder } from "@ruststream/core";
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import {
  POSTGRES_CLAIM,
  POSTGRES_LEASE_MS,
  POSTGRES_PREFETCH,
  POSTGRES_TABLE,
} from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";

export function mountPostgres(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: PostgresQueue) => SubscriberBuilder<unknown>,
    source: (queue: string) => PostgresQueue,
  ) => void,
): void {
  // The retry scenario checks no order and runs without `keyOrder`; its `-keyorder` variant with.
  const source = (queue: string) =>
    new PostgresQueue(queue, {
      claim: POSTGRES_CLAIM,
      leaseMs: POSTGRES_LEASE_MS,
      keyOrder: config.keyOrder ?? config.retry === undefined,
    });
  app.broker(
    new PostgresBroker({ url: config.address, table: POSTGRES_TABLE, ensureSchema: true }),
    (b) => declare((s: PostgresQueue) => b.subscriber(s).prefetch(POSTGRES_PREFETCH), source),
  );
}
