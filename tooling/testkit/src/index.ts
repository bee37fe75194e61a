export {
  type BrokerName,
  type BrokerVariable,
  brokers,
  dropKafkajsNegativeTimeoutWarning,
  ensureBrokers,
  requireEnv,
} from "./brokers.js";
export {
  type ChildService,
  type ChildServiceOptions,
  killServices,
  startService,
} from "./childService.js";
export {
  type DrainPeaks,
  drainSampled,
  type HeapProbe,
  type HeapProbeOptions,
  type HeapSample,
  type HeldHandler,
  heldBytes,
  heldHandler,
  type ProbedConsumer,
  readAheadSettled,
  serveHeapProbe,
  settledSample,
  startHeapProbe,
} from "./heapProbe.js";
export { bytes, text } from "./payloadText.js";
export { sleep } from "./sleep.js";
export { uniqueName } from "./uniqueName.js";
export { within } from "./within.js";
