import { conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import { type ConnectedRedisBroker, RedisBroker, RedisPublish, RedisPubSub } from "../src/index.js";
import { pubSubCapabilities as capabilities } from "./capabilities.js";

// Pub/Sub against the real server: fire-and-forget, so the scenarios that need a settle verb or a
// durable subscription show in the tally as skipped, with the reason.
const makeBroker = () => new RedisBroker({ url: requireEnv("REDIS_URL") });
const makeSource = (name: string) => new RedisPubSub(name);
const timing = { arrivalMs: 5000, silenceMs: 300 };
// A name is a stream unless said otherwise: publishers to a channel use the pubsub policy.
const makePublisher = (connected: ConnectedRedisBroker) =>
  new RedisPublish({ transport: "pubsub" }).pair(connected);
const factories = { makeBroker, makeSource, makePublisher, capabilities, timing };

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
