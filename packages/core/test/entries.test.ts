import { expect, it } from "vitest";
import * as forBrokers from "../src/brokerEntry.js";
import * as forServices from "../src/index.js";

// Two audiences, two entries: a service author's @ruststream/core, a broker author's (and a test
// harness's) @ruststream/core/broker. A name is in one of them, never both.

it("the entries share no name", () => {
  const services = new Set(Object.keys(forServices));
  expect(Object.keys(forBrokers).filter((name) => services.has(name))).toEqual([]);
});

it("what only a broker needs is not offered to a service", () => {
  for (const name of [
    "DeliveryBase",
    "CountingCoordinator",
    "ReplyWaiters",
    "subscriptionIterator",
    "assertBatchSize",
    "wireHeaders",
    "snapshotMessage",
    "attemptOf",
    "noCoordinator",
    "stageTransaction",
    "brokerMark",
    "seekMark",
    "resolveTls",
    "commitModes",
    "nodeTlsSettings",
  ]) {
    expect(name in forServices, name).toBe(false);
    expect(name in forBrokers, name).toBe(true);
  }
});

it("what a service is handed, never builds, is a type only", () => {
  for (const name of ["ConnectedMemoryBroker", "SubscriberBuilder", "BatchSubscriberBuilder"]) {
    expect(name in forServices, name).toBe(false);
  }
});
