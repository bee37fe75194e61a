import { conformance } from "@ruststream/testing";
import { type ConnectedRedisBroker, RedisBroker, RedisList, RedisPublish } from "../src/index.js";
import { requireEnv } from "./env.js";

// Reliable lists against the real server: a work queue with a processing list, so a backlog is
// delivered, settlement is exact, batches move what the queue holds, and nothing seeks.
const makeBroker = () => new RedisBroker({ url: requireEnv("REDIS_URL") });
const makeSource = (name: string) => new RedisList(name, { blockMs: 1000 });
const timing = { arrivalMs: 5000, silenceMs: 300 };
// A name is a stream unless said otherwise: publishers to a list use the list policy.
const makePublisher = (connected: ConnectedRedisBroker) =>
  new RedisPublish({ transport: "list" }).pair(connected);

conformance.routing({ makeBroker, makeSource, makePublisher, timing, backlog: "delivered" });
conformance.lifecycle({ makeBroker, makeSource, makePublisher, timing });
conformance.settlement({ makeBroker, makeSource, makePublisher, timing });
conformance.messageShape({ makeBroker, makeSource, makePublisher, timing });
conformance.transactions({ makeBroker, makeSource, makePublisher, timing });
conformance.batches({ makeBroker, makeSource, makePublisher, timing });
