import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import {
  type ConnectedRedisBroker,
  RedisBroker,
  type RedisBrokerOptions,
  RedisList,
  RedisPublish,
  RedisPubSub,
  RedisStream,
  RedisStreamPosition,
} from "../../src/index.js";
import { listCapabilities, pubSubCapabilities, streamCapabilities } from "../capabilities.js";

// The conformance suites the one server passes, for each transport, against another deployment:
// the same declarations (test/capabilities.ts), so a cluster or a Sentinel set answers as one server
// does. Credentials are checked by the deployment's own tests: the suite's check connects with a
// password of its making, which these protected nodes refuse.

const timing = { arrivalMs: 8000, silenceMs: 300 };

export function conformanceOn(options: () => RedisBrokerOptions): void {
  const makeBroker = () => new RedisBroker(options());

  describe("streams", () => {
    const makeSource = (name: string) =>
      new RedisStream(name, { group: "conformance", blockMs: 1000 });
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
  });

  describe("reliable lists", () => {
    const makeSource = (name: string) => new RedisList(name, { blockMs: 1000 });
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
  });

  describe("pub/sub", () => {
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
  });
}
