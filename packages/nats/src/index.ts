// The NATS broker's public API, by name. The layout every broker package follows:
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   sources.ts        the descriptors subscribe takes: NatsSubject, JetStreamSubject, KvWatch,
//                     ObjectWatch
//   orderedSubject.ts the ordered consumer's descriptor, OrderedJetStreamSubject
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live core NATS publisher (and requests)
//   schedule.ts       a publish's message schedule (NATS 2.12): its headers and refusals
//   scheduleCancel.ts  a pending schedule cancelled: its subject purged
//   jetStreamPublisher.ts  the live JetStream publisher
//   headerValues.ts   header values as NATS carries them
//   replyInbox.ts     where requests wait for their replies
//   position.ts       where a delivery sits
//   priority.ts       a JetStream consumer's priority group (pinned, overflow, prioritized):
//                     its checks, its consumer settings and pull fields
//   unpin.ts          a pinned group's pin let go of (the publisher's unpin): its checks, refusals
//   names.ts          the names it writes on its wire
//   host.ts           what the modes need from the connection
//   core/             core NATS subjects: the subscription and its delivery
//   jetstream/        JetStream pull consumers (ordered ones too): the subscription and its deliveries
//   kv/               KV buckets: a watch (a pull consumer on the bucket's stream) and its delivery;
//                     NatsKv and its KvBucket (a key's reads, puts, deletes and purges)
//   obj/              object store watches, puts and deletes: the watch, its delivery, the put policy
//   client/           the adapter over @nats-io/transport-node and @nats-io/jetstream
//   inProcess/        the in-process stand-in of the server, for TestApp

export { NatsBroker } from "./broker.js";
export type { NatsObjectInfo } from "./client/objectMeta.js";
export type { ClosedNatsBroker, ConnectedNatsBroker, NatsSource } from "./connection.js";
export type { CoreDelivery } from "./core/coreDelivery.js";
export type { CoreSubscription } from "./core/coreSubscription.js";
export type { JetStreamPublisher } from "./jetStreamPublisher.js";
export type { JetStreamDelivery } from "./jetstream/jetStreamDelivery.js";
export type { JetStreamSubscription } from "./jetstream/jetStreamSubscription.js";
export type { OrderedDelivery } from "./jetstream/orderedDelivery.js";
export type {
  KvBucket,
  KvEntry,
  KvGetOptions,
  KvPurgeOptions,
  KvPutOptions,
  KvReadOptions,
  KvRemovedEntry,
  KvRemoveOptions,
  KvValueEntry,
  KvWriteOptions,
} from "./kv/kvBucket.js";
export { KvDelivery, type KvOperation } from "./kv/kvDelivery.js";
export { NatsKv, type NatsKvOptions } from "./kv/natsKv.js";
export {
  jetStreamHeaders,
  kvHeaders,
  kvSubject,
  natsHeaderNames,
  scheduleHeaders,
} from "./names.js";
export { ObjectDelivery } from "./obj/objectDelivery.js";
export type { NatsObjectReceipt, ObjectPublisher } from "./obj/objectPublisher.js";
export { NatsObjectPut } from "./obj/objectPutPolicy.js";
export type { NatsBrokerOptions, NatsCredentials } from "./options.js";
export { type OrderedJetStreamOptions, OrderedJetStreamSubject } from "./orderedSubject.js";
export {
  JetStreamPosition,
  type JetStreamSeekPosition,
  JetStreamTimePosition,
  NatsArrivalPosition,
  parseJetStreamPosition,
} from "./position.js";
export type { PriorityGroup } from "./priority.js";
export type {
  JetStreamExpectations,
  NatsPublisher,
  NatsPublishOptions,
  NatsPublishSettings,
  NatsReceipt,
} from "./publisher.js";
export { NatsPublish } from "./publishPolicy.js";
export type {
  EphemeralPushBinding,
  EphemeralPushDeclaration,
  PushBinding,
  PushDeclaration,
} from "./push.js";
export type { NatsSchedule, NatsScheduleTime } from "./schedule.js";
export {
  type DeliverPolicy,
  type DurableConsumerOptions,
  type EphemeralConsumerOptions,
  type JetStreamConsumerOptions,
  JetStreamSubject,
  type JetStreamSubjectOptions,
  type KvBucketDeclaration,
  type KvStart,
  KvWatch,
  type KvWatchOptions,
  NatsSubject,
  type NatsSubjectOptions,
  type ObjectStoreDeclaration,
  ObjectWatch,
  type ObjectWatchOptions,
  type StreamDeclaration,
} from "./sources.js";
export type { PinnedGroupRef } from "./unpin.js";
