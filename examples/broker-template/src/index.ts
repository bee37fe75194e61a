// The channel broker's public API, by name. The layout every broker package follows:
//   broker.ts     the broker, its connection and its closed witness
//   sources.ts    the descriptors subscribe takes
//   publisher.ts  the publish policy and the live publisher
//   position.ts   where a delivery sits
//   names.ts      the names it writes on its wire
//   channel/      one folder per subscription mode: its subscription and delivery
//   wire/         the protocol, or the adapter over a client library
//   inProcess/    the in-process stand-in of the server, for TestApp (the template's is a
//                 private Hub of the broker object, so it needs no folder)
export type {
  ChannelBrokerOptions,
  ClosedChannelBroker,
  ConnectedChannelBroker,
} from "./broker.js";
export { ChannelBroker } from "./broker.js";
export type { ChannelDelivery } from "./channel/channelDelivery.js";
export type { ChannelSubscription } from "./channel/channelSubscription.js";
export { channelHeaderNames } from "./names.js";
export { ChannelPosition } from "./position.js";
export { ChannelPublish, ChannelPublisher } from "./publisher.js";
export { Channel } from "./sources.js";
