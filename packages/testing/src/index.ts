export type { CredentialsFactories } from "./conformance/credentials.js";
export type {
  AnyConnected,
  BrokerFactories,
  SourceOf,
  Timing,
} from "./conformance/harness.js";
export { Collector, elsewhere, uniqueName } from "./conformance/helpers.js";
export type { LifecycleFactories } from "./conformance/lifecycle.js";
export type { MessageShapeFactories } from "./conformance/messageShape.js";
export type { RequestReplyFactories } from "./conformance/requestReply.js";
export type { BrokerMovedRetryFactories } from "./conformance/retry.js";
export type { RoutingFactories } from "./conformance/routing.js";
export type { SeekingFactories } from "./conformance/seeking.js";
export { conformance } from "./conformance.js";
