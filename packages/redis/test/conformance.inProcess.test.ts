import { type Broker, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import {
  type ConnectedRedisBroker,
  RedisBroker,
  RedisList,
  RedisPublish,
  RedisPubSub,
  RedisStream,
  RedisStreamPosition,
} from "../src/index.js";
import { listCapabilities, pubSubCapabilities, streamCapabilities } from "./capabilities.js";

// The in-process mode runs the broker's own code against a stand-in of the server; these are the
// same suites the real server passes, so both answer alike.

/** Connections of one in-process server, as the suites' "new client of the same server". */
function inProcess(server: RedisBroker): () => Broker<ConnectedRedisBroker> {
  const broker: Broker<ConnectedRedisBroker> = {
    [brokerMark]: "redis",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
  return () => broker;
}

const timing = { arrivalMs: 3000, silenceMs: 200 };

describe("streams", () => {
  const makeBroker = inProcess(new RedisBroker({ group: "conformance" }));
  const makeSource = (name: string) => new RedisStream(name, { group: "conformance" });
  const factories = { makeBroker, makeSource, capabilities: streamCapabilities, timing };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.redeliveryAddress(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking({
    ...factories,
    unknownPosition: () => new RedisStreamPosition(99_999_999_999_999n, 0n),
  });
  conformance.transactions(factories);
  conformance.requestReply(factories);
  conformance.inProcessTransport({
    ...factories,
    makeBroker: () => new RedisBroker({ group: "conformance" }),
  });
});

describe("reliable lists", () => {
  const makeBroker = inProcess(new RedisBroker());
  const makeSource = (name: string) => new RedisList(name);
  const makePublisher = (connected: ConnectedRedisBroker) =>
    new RedisPublish({ transport: "list" }).pair(connected);
  const factories = {
    makeBroker,
    makeSource,
    makePublisher,
    capabilities: listCapabilities,
    timing,
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.redeliveryAddress(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking(factories);
  conformance.transactions(factories);
  conformance.requestReply(factories);
  conformance.inProcessTransport({ ...factories, makeBroker: () => new RedisBroker() });
});

describe("pub/sub", () => {
  const makeBroker = inProcess(new RedisBroker());
  const makeSource = (name: string) => new RedisPubSub(name);
  const makePublisher = (connected: ConnectedRedisBroker) =>
    new RedisPublish({ transport: "pubsub" }).pair(connected);
  const factories = {
    makeBroker,
    makeSource,
    makePublisher,
    capabilities: pubSubCapabilities,
    timing,
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  // Every subscriber of a channel gets each message.
  conformance.redeliveryAddress({ ...factories, fanOut: true });
  conformance.messageShape(factories);
  conformance.transactions(factories);
  conformance.batches(factories);
  conformance.seeking(factories);
  conformance.requestReply(factories);
  conformance.inProcessTransport({ ...factories, makeBroker: () => new RedisBroker() });
});

// A broker configured for a cluster gets a stand-in that answers as a cluster where the broker's
// code can tell (derived keys in their key's slot, sharded channels, transactions in one slot): the
// same suites hold for it. It never connects to the addresses given.
describe("a broker configured for a cluster", () => {
  const clusterBroker = (group?: string) =>
    new RedisBroker({
      cluster: { nodes: ["127.0.0.1:1"] },
      ...(group === undefined ? {} : { group }),
    });
  describe("streams", () => {
    const makeBroker = inProcess(clusterBroker("conformance"));
    const makeSource = (name: string) => new RedisStream(name, { group: "conformance" });
    const factories = { makeBroker, makeSource, capabilities: streamCapabilities, timing };
    conformance.settlement(factories);
    conformance.redeliveryAddress(factories);
    conformance.transactions(factories);
    conformance.requestReply(factories);
  });
  describe("reliable lists", () => {
    const makeBroker = inProcess(clusterBroker());
    const makeSource = (name: string) => new RedisList(name, { recoveryIdleMs: 60_000 });
    const makePublisher = (connected: ConnectedRedisBroker) =>
      new RedisPublish({ transport: "list" }).pair(connected);
    const factories = {
      makeBroker,
      makeSource,
      makePublisher,
      capabilities: listCapabilities,
      timing,
    };
    conformance.settlement(factories);
    conformance.redeliveryAddress(factories);
    conformance.transactions(factories);
  });
  describe("pub/sub", () => {
    const makeBroker = inProcess(clusterBroker());
    const makeSource = (name: string) => new RedisPubSub(name);
    const makePublisher = (connected: ConnectedRedisBroker) =>
      new RedisPublish({ transport: "pubsub" }).pair(connected);
    const factories = {
      makeBroker,
      makeSource,
      makePublisher,
      capabilities: pubSubCapabilities,
      timing,
    };
    conformance.routing(factories);
    conformance.transactions(factories);
  });
});
