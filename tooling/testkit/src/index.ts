export {
  type BrokerName,
  type BrokerVariable,
  brokers,
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
  type HeapProbe,
  type HeapProbeOptions,
  type HeapSample,
  heldBytes,
  type ProbedConsumer,
  serveHeapProbe,
  startHeapProbe,
} from "./heapProbe.js";
export { bytes, text } from "./payloadText.js";
export { sleep } from "./sleep.js";
export { uniqueName } from "./uniqueName.js";
