// The channel broker's public API, by name. The layout every broker package follows:
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   sources.ts        the descriptors subscribe takes
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher
//   replyInbox.ts     where requests wait for their replies (the template has no requests)
//   position.ts       where a delivery sits
//   names.ts          the names it writes on its wire
//   channel/          one folder per subscription mode: its subscription and delivery
//   wire/             the protocol, or the adapter over a client library
//   inProcess/        the in-process stand-in of the server, for TestApp (the template's is a
//                     private Hub of the broker object, so it needs no folder)

export { ChannelBroker } from "./broker.js";
export type { ChannelDelivery } from "./channel/channelDelivery.js";
export type { ChannelSubscription } from "./channel/channelSubscription.js";
export type { ClosedChannelBroker, ConnectedChannelBroker } from "./connection.js";
export { channelHeaderNames } from "./names.js";
export type { ChannelBrokerOptions } from "./options.js";
export { ChannelPosition } from "./position.js";
export { ChannelPublisher } from "./publisher.js";
export { ChannelPublish } from "./publishPolicy.js";
export { Channel } from "./sources.js";
