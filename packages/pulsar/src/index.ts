// The Pulsar broker's public API, by name. The layout every broker package follows (README, Layout):
//   broker.ts      the broker, its connection and its closed witness
//   sources.ts     the descriptors subscribe takes (one per subscription type)
//   publisher.ts   the publish policy, the live publisher and its per-message options
//   position.ts    where a delivery sits: a message id, or a publish time to seek to
//   names.ts       the names it writes on Pulsar's wire
//   host.ts        what the subscription modes need from the connection
//   subscription/  the subscription every type shares, its readers, the reply inbox
//   delivery/      how a delivery settles: its base, Shared and Key_Shared (the broker moves
//                  retries), Exclusive and Failover (retries are copies to the retry topic)
//   link/          all the broker needs from its server, and that link over the wire client
//   wire/          the Pulsar binary protocol: the @ruststream/pulsar/wire entry and what it is
//                  built from, nothing else
//   inProcess/     the in-process stand-in of the broker, for TestApp
export type { ClosedPulsarBroker, ConnectedPulsarBroker, PulsarBrokerOptions } from "./broker.js";
export { PulsarBroker } from "./broker.js";
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
export type { PulsarPosition } from "./position.js";
export { PulsarMessagePosition, PulsarTimePosition, parsePulsarPosition } from "./position.js";
export type { PulsarPublishOptions, PulsarPublishSettings } from "./publisher.js";
export { PulsarPublish, PulsarPublisher } from "./publisher.js";
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
