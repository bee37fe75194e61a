export type { Capabilities, Capability } from "./conformance/capabilities.js";
export type { CredentialsFactories } from "./conformance/credentials.js";
export type {
  AnyConnected,
  BrokerFactories,
  SourceOf,
  Timing,
} from "./conformance/harness.js";
export { Collector, elsewhere, uniqueName } from "./conformance/helpers.js";
export type { LifecycleFactories } from "./conformance/lifecycle.js";
export type { RequestReplyFactories } from "./conformance/requestReply.js";
export type { BrokerMovedRetryFactories } from "./conformance/retry.js";
export type { SeekingFactories } from "./conformance/seeking.js";
export { conformance } from "./conformance.js";

// ---- TestApp (issue 4): runs the production app in-process, or live with a bounded wait. ----
export { PublishedMessage } from "./testApp/publishedMessage.js";
export { SubscriberProbe } from "./testApp/subscriberProbe.js";
export type { LiveOptions, TestAppOptions, TestPublishOptions } from "./testApp/testApp.js";
export { TestApp } from "./testApp/testApp.js";
