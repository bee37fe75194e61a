// @ruststream/testing: TestApp, which runs the production app in-process, or live with a bounded
// wait, and the small helpers a broker test writes with (unique names, UTF-8 payloads, a bounded
// wait). Nothing here imports vitest, so the entry loads from CommonJS and ES modules alike; the
// conformance suites, which register vitest tests, are @ruststream/testing/conformance.
export { bytes, text } from "./helpers/payloadText.js";
export { sleep } from "./helpers/sleep.js";
export { uniqueName } from "./helpers/uniqueName.js";
export { within } from "./helpers/within.js";
export { PublishedMessage } from "./testApp/publishedMessage.js";
export { SubscriberProbe } from "./testApp/subscriberProbe.js";
export type { LiveOptions, TestAppOptions, TestPublishOptions } from "./testApp/testApp.js";
export { TestApp } from "./testApp/testApp.js";
