// The PostgreSQL queue broker's public API, by name. The layout every broker package follows:
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   sources.ts        the descriptor subscribe takes (a queue)
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher
//   position.ts       where a delivery sits (its row's id)
//   names.ts          the names it writes
//   schema.ts         the queue table's SQL; table.ts, the table's name and what follows from it
//   queue/            the queue mode: its subscription, delivery, batched settles, transactionOf
//   client/           the seam (driver.ts), pg behind it, and the statements (sqlStore.ts)
//   outbox/           the transactional outbox (a second queue table), its relay, and the inbox
//   inProcess/        the in-process stand-in of the table, for TestApp

export { PostgresBroker } from "./broker.js";
export type {
  ListenEvents,
  Listening,
  PostgresDriver,
  Queryable,
  QueryResult,
} from "./client/driver.js";
export type { DrizzleTransactionLike } from "./client/drizzleTransaction.js";
export { drizzleTransaction } from "./client/drizzleTransaction.js";
export type { KyselyTransactionLike } from "./client/kyselyTransaction.js";
export { kyselyTransaction } from "./client/kyselyTransaction.js";
export type { PGliteLike } from "./client/pgliteDriver.js";
export { PgliteDriver } from "./client/pgliteDriver.js";
export type { PostgresJsLike, PostgresJsTransactionLike } from "./client/postgresJsDriver.js";
export { PostgresJsDriver, postgresJsTransaction } from "./client/postgresJsDriver.js";
export type { Prepared } from "./client/prepared.js";
export type { ClosedPostgresBroker, ConnectedPostgresBroker } from "./connection.js";
export { postgresHeaderNames } from "./names.js";
export type { PgPoolLike, PostgresBrokerOptions } from "./options.js";
export type { OutboxAppRelayOptions } from "./outbox/appTargets.js";
export { PostgresInbox } from "./outbox/inbox.js";
export { inboxSchemaSql } from "./outbox/inboxTable.js";
export type { OutboxDestination, OutboxHost, OutboxMessage } from "./outbox/outbox.js";
export { PostgresOutbox } from "./outbox/outbox.js";
export { outboxSchemaSql } from "./outbox/outboxTable.js";
export type { OutboxRelay, OutboxRelayOptions, RelayHost } from "./outbox/relay.js";
export { outboxDeadLetter } from "./outbox/relay.js";
export { PostgresQueuePosition } from "./position.js";
export type { PostgresPublishOptions } from "./publisher.js";
export { PostgresPublisher } from "./publisher.js";
export { PostgresPublish } from "./publishPolicy.js";
export type { PostgresQueueDelivery } from "./queue/queueDelivery.js";
export type { PostgresQueueSubscription } from "./queue/queueSubscription.js";
export { transactionOf } from "./queue/transactionOf.js";
export { schemaSql } from "./schema.js";
export type { AckMode, PostgresQueueOptions } from "./sources.js";
export { PostgresQueue } from "./sources.js";
