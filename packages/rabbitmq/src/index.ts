// The RabbitMQ broker's public API, by name. The layout every broker package follows:
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   login.ts          what a url says of who logs in and where (the mechanism, user, vhost)
//   sources.ts        the descriptors subscribe takes (classic, quorum and stream queues)
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher
//   replyInbox.ts     where requests wait for their replies (direct reply-to)
//   host.ts           what a subscription needs from its connection
//   position.ts       where a delivery sits
//   names.ts          the names it writes on its wire
//   amqpHeaders.ts    headers to AMQP properties and tables, and back
//   link.ts           what the broker needs of the server
//   topology/         exchanges, queues and bindings as data, and the refusals of a check
//   queue/            the queue mode: its subscription and delivery
//   stream/           the stream mode: a queue subscription that seeks
//   client/           the link on amqplib: our connection and its recovery, the only code that meets the server
//   inProcess/        the in-process stand-in of the server, for TestApp

export { RabbitBroker } from "./broker.js";
export type { ClosedRabbitBroker, ConnectedRabbitBroker } from "./connection.js";
export type { RabbitAuthMechanism } from "./login.js";
export { rabbitHeaderNames } from "./names.js";
export type { RabbitBrokerOptions } from "./options.js";
export {
  parseRabbitStreamPosition,
  RabbitPosition,
  type RabbitStreamSeekPosition,
  RabbitStreamTimePosition,
} from "./position.js";
export type { RabbitPublisher, RabbitPublishOptions } from "./publisher.js";
export { RabbitPublish, type RabbitPublishPolicyOptions } from "./publishPolicy.js";
export type { QueueBacklogSubscription } from "./queue/queueBacklogSubscription.js";
export type { QueueDelivery } from "./queue/queueDelivery.js";
export type { QueueSubscription } from "./queue/queueSubscription.js";
export {
  type RabbitClassicQueueOptions,
  RabbitQueue,
  type RabbitQueueOptions,
  RabbitQuorumQueue,
  type RabbitQuorumQueueOptions,
  type RabbitSource,
  RabbitStream,
  type RabbitStreamOptions,
} from "./sources.js";
export type { StreamSubscription } from "./stream/streamSubscription.js";
export type { RabbitBinding } from "./topology/binding.js";
export { RabbitExchange, type RabbitExchangeOptions } from "./topology/exchange.js";
export type { StreamOffset } from "./topology/streamOffset.js";
export type { ExchangeType, QueueType, Table, TableValue } from "./topology/topology.js";
