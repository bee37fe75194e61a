import { type Broker, brokerMark, CountingCoordinator, systemClock } from "@ruststream/core";
import { conformance } from "@ruststream/testing";
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
  conformance.routing({ makeBroker, makeSource, timing, backlog: "missed" });
  conformance.lifecycle({ makeBroker, makeSource, timing });
  conformance.settlement({ makeBroker, makeSource, timing });
  conformance.redeliveryAddress({ makeBroker, makeSource, timing });
  conformance.messageShape({ makeBroker, makeSource, timing });
  conformance.batches({ makeBroker, makeSource, timing });
  conformance.seeking({
    makeBroker,
    makeSource,
    timing,
    unknownPosition: () => new RedisStreamPosition(99_999_999_999_999n, 0n),
  });
  conformance.transactions({ makeBroker, makeSource, timing });
  conformance.requestReply({ makeBroker, makeSource, timing });
  conformance.inProcessTransport({
    makeBroker: () => new RedisBroker({ group: "conformance" }),
    makeSource,
    timing,
  });
});

describe("reliable lists", () => {
  const makeBroker = inProcess(new RedisBroker());
  const makeSource = (name: string) => new RedisList(name);
  const makePublisher = (connected: ConnectedRedisBroker) =>
    new RedisPublish({ transport: "list" }).pair(connected);
  conformance.routing({ makeBroker, makeSource, makePublisher, timing, backlog: "delivered" });
  conformance.lifecycle({ makeBroker, makeSource, makePublisher, timing });
  conformance.settlement({ makeBroker, makeSource, makePublisher, timing });
  conformance.messageShape({ makeBroker, makeSource, makePublisher, timing });
  conformance.transactions({ makeBroker, makeSource, makePublisher, timing });
  conformance.batches({ makeBroker, makeSource, makePublisher, timing });
  conformance.inProcessTransport({ makeBroker: () => new RedisBroker(), makeSource, timing });
});

describe("pub/sub", () => {
  const makeBroker = inProcess(new RedisBroker());
  const makeSource = (name: string) => new RedisPubSub(name);
  const makePublisher = (connected: ConnectedRedisBroker) =>
    new RedisPublish({ transport: "pubsub" }).pair(connected);
  conformance.routing({ makeBroker, makeSource, makePublisher, timing, backlog: "missed" });
  conformance.lifecycle({ makeBroker, makeSource, makePublisher, timing });
  conformance.messageShape({ makeBroker, makeSource, makePublisher, timing });
  conformance.transactions({ makeBroker, makeSource, makePublisher, timing });
  conformance.batches({ makeBroker, makeSource, makePublisher, timing });
});
