import { conformance } from "@ruststream/testing";
import { type ConnectedRedisBroker, RedisBroker, RedisPublish, RedisPubSub } from "../src/index.js";
import { requireEnv } from "./env.js";

// Pub/Sub against the real server: fire-and-forget, so only the suites that hold without
// acknowledgement apply (settlement answers "unsupported" and the suites take that path).
const makeBroker = () => new RedisBroker({ url: requireEnv("REDIS_URL") });
const makeSource = (name: string) => new RedisPubSub(name);
const timing = { arrivalMs: 5000, silenceMs: 300 };
// A name is a stream unless said otherwise: publishers to a channel use the pubsub policy.
const makePublisher = (connected: ConnectedRedisBroker) =>
  new RedisPublish({ transport: "pubsub" }).pair(connected);

conformance.routing({ makeBroker, makeSource, makePublisher, timing, backlog: "missed" });
conformance.lifecycle({ makeBroker, makeSource, makePublisher, timing });
conformance.messageShape({ makeBroker, makeSource, makePublisher, timing });
conformance.transactions({ makeBroker, makeSource, makePublisher, timing });
conformance.batches({ makeBroker, makeSource, makePublisher, timing });
