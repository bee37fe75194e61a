// Published in @ruststream/testing for users' broker tests, and re-exported so that a test of this
// repository takes its whole kit from one import.
export { bytes, sleep, text, uniqueName, within } from "@ruststream/testing";
export {
  type BrokerName,
  type BrokerVariable,
  brokers,
  dropKafkajsNegativeTimeoutWarning,
  ensureBrokers,
  ensureNatsServer,
  ensureTestCertificates,
  requireEnv,
  type TestCertificates,
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
export { expectedRuntime, type RoundTrip, roundTrip } from "./roundTrip.js";
export { childEnv, type ScriptCommandOptions, scriptCommand } from "./scriptCommand.js";
export { TcpRelay } from "./tcpRelay.js";
