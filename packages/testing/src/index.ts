// @ruststream/testing: TestApp, which runs the production app in-process, or live with a bounded
// wait. Nothing here imports vitest, so the entry loads from CommonJS and ES modules alike; the
// conformance suites, which register vitest tests, are @ruststream/testing/conformance.
export { PublishedMessage } from "./testApp/publishedMessage.js";
export { SubscriberProbe } from "./testApp/subscriberProbe.js";
export type { LiveOptions, TestAppOptions, TestPublishOptions } from "./testApp/testApp.js";
export { TestApp } from "./testApp/testApp.js";
