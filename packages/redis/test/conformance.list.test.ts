import { conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import { type ConnectedRedisBroker, RedisBroker, RedisList, RedisPublish } from "../src/index.js";
import { listCapabilities as capabilities } from "./capabilities.js";

// Reliable lists against the real server; what a list cannot do shows in the tally as skipped.
const makeBroker = () => new RedisBroker({ url: requireEnv("REDIS_URL") });
const makeSource = (name: string) => new RedisList(name, { blockMs: 1000 });
const timing = { arrivalMs: 5000, silenceMs: 300 };
// A name is a stream unless said otherwise: publishers to a list use the list policy.
const makePublisher = (connected: ConnectedRedisBroker) =>
  new RedisPublish({ transport: "list" }).pair(connected);
const factories = { makeBroker, makeSource, makePublisher, capabilities, timing };

conformance.routing(factories);
conformance.lifecycle(factories);
conformance.settlement(factories);
conformance.redeliveryAddress(factories);
conformance.messageShape(factories);
conformance.batches(factories);
conformance.seeking(factories);
conformance.transactions(factories);
conformance.requestReply(factories);
