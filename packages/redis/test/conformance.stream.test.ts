import { conformance } from "@ruststream/testing";
import { RedisBroker, RedisStream, RedisStreamPosition } from "../src/index.js";
import { requireEnv } from "./env.js";

// Streams against the real server. Every subject is a fresh key; the group is fixed per subject, so
// a second client of the same subject joins the group the first one made.
const makeBroker = () => new RedisBroker({ url: requireEnv("REDIS_URL") });
const makeSource = (name: string) => new RedisStream(name, { group: "conformance", blockMs: 1000 });
const timing = { arrivalMs: 5000, silenceMs: 300 };

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
  // An id far past anything written: no entry holds it.
  unknownPosition: () => new RedisStreamPosition(99_999_999_999_999n, 0n),
});
conformance.transactions({ makeBroker, makeSource, timing });
conformance.requestReply({ makeBroker, makeSource, timing });
conformance.credentials({
  makeBroker: (secret) =>
    // The plain server lets the default user in with any password: a real connection carrying one.
    new RedisBroker({ url: requireEnv("REDIS_URL"), username: "default", password: secret }),
  makeSource,
});
