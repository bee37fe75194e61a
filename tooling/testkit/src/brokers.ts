/// <reference path="./toolingBrokers.d.ts" />
// tooling/brokers, typed: the one place a test reaches it from, so its declaration exists once.
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
} from "@ruststream/tooling-brokers";
