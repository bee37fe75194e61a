// The Pulsar broker's public API, by name. The layout every broker package follows (README, Layout):
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   sources.ts        the descriptors subscribe takes (one per subscription type)
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher and its per-message options
//   replyInbox.ts     where a connection's requests read their replies (a reply topic of its own)
//   position.ts       where a delivery sits: a message id, or a publish time to seek to
//   names.ts          the names it writes on Pulsar's wire
//   host.ts           what the subscription modes need from the connection
//   subscription/     the subscription every type shares, and its readers
//   delivery/         how a delivery settles: its base, Shared and Key_Shared (the broker moves
//                     retries), Exclusive and Failover (retries are copies to the retry topic)
//   link/             all the broker needs from its server, and that link over the wire client
//   wire/             the Pulsar binary protocol: the @ruststream/pulsar/wire entry and what it is
//                     built from, nothing else
//   inProcess/        the in-process stand-in of the broker, for TestApp
export { PulsarBroker } from "./broker.js";
export type { ClosedPulsarBroker, ConnectedPulsarBroker } from "./connection.js";
export type { PulsarDelivery } from "./delivery/pulsarDelivery.js";
export type { DeadLetterPolicy, SharedDelivery } from "./delivery/sharedDelivery.js";
export type { SingleDelivery } from "./delivery/singleDelivery.js";
export type { InProcessSettings } from "./inProcess/inProcessPulsar.js";
export {
  deadLetterTopic,
  pulsarProperties,
  retryTopic,
  topicSuffixes,
  undecodableHeaders,
} from "./names.js";
export type { PulsarBrokerOptions } from "./options.js";
export type { PulsarPosition } from "./position.js";
export { PulsarMessagePosition, PulsarTimePosition, parsePulsarPosition } from "./position.js";
export type { PulsarPublishOptions, PulsarPublishSettings } from "./publisher.js";
export { PulsarPublisher } from "./publisher.js";
export { PulsarPublish } from "./publishPolicy.js";
export type {
  PulsarExclusiveOptions,
  PulsarKeySharedOptions,
  PulsarSharedOptions,
  PulsarSharedSource,
  PulsarSingleSource,
  PulsarSource,
  PulsarTopicOptions,
} from "./sources.js";
export { PulsarExclusive, PulsarFailover, PulsarKeyShared, PulsarShared } from "./sources.js";
export type { PulsarSubscription } from "./subscription/pulsarSubscription.js";
// One spelling for the wire client and the descriptors; named on this entry only.
export type { InitialPosition } from "./wire/consumer/consumerOptions.js";
