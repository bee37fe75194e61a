import { conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import { RedisBroker, RedisStream, RedisStreamPosition } from "../src/index.js";
import { streamCapabilities as capabilities } from "./capabilities.js";

// Streams against the real server. Every subject is a fresh key; the group is fixed per subject, so
// a second client of the same subject joins the group the first one made.
const makeBroker = () => new RedisBroker({ url: requireEnv("REDIS_URL") });
const makeSource = (name: string) => new RedisStream(name, { group: "conformance", blockMs: 1000 });
const timing = { arrivalMs: 5000, silenceMs: 300 };
const factories = { makeBroker, makeSource, capabilities, timing };

conformance.routing(factories);
conformance.lifecycle(factories);
conformance.settlement(factories);
conformance.redeliveryAddress(factories);
conformance.messageShape(factories);
conformance.batches(factories);
conformance.seeking({
  ...factories,
  // An id far past anything written: no entry holds it.
  unknownPosition: () => new RedisStreamPosition(99_999_999_999_999n, 0n),
});
conformance.transactions(factories);
conformance.requestReply(factories);
conformance.credentials({
  makeBroker: (secret) =>
    // The plain server lets the default user in with any password: a real connection carrying one.
    new RedisBroker({ url: requireEnv("REDIS_URL"), username: "default", password: secret }),
  makeSource,
});
