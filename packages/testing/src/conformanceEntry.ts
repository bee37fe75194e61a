// @ruststream/testing/conformance: the broker conformance suites. They register vitest tests, and
// vitest ships only as ES modules, so this entry is ES module only; the main entry (TestApp) needs
// no vitest and loads from CommonJS too.
export type {
  Absence,
  Capabilities,
  Capability,
  Declared,
  NotBuilt,
} from "./conformance/capabilities.js";
export { notBuilt, skippedName } from "./conformance/capabilities.js";
export type { CredentialsFactories } from "./conformance/credentials.js";
export type {
  AnyConnected,
  BrokerFactories,
  SourceOf,
  Timing,
} from "./conformance/harness.js";
export type { LifecycleFactories } from "./conformance/lifecycle.js";
export type { RequestReplyFactories } from "./conformance/requestReply.js";
export type { BrokerMovedRetryFactories, RedeliveryAddressFactories } from "./conformance/retry.js";
export type { SeekingFactories } from "./conformance/seeking.js";
export { conformance } from "./conformance.js";
