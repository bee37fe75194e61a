import { requireEnv } from "@ruststream/tooling-testkit";
import { describe } from "vitest";
import { PulsarBroker, PulsarExclusive, PulsarFailover } from "../src/index.js";
import { singleCapabilities } from "./capabilities.js";
import { credentialsSuite, everySuite } from "./conformance.js";

// Every suite on Exclusive and Failover subscriptions against the real broker: each call of
// makeBroker is a new client of the same standalone.
const makeBroker = () => new PulsarBroker({ url: requireEnv("PULSAR_URL") });
const timing = { arrivalMs: 10_000, silenceMs: 300 };

describe("Exclusive", () => {
  everySuite(
    makeBroker,
    (name) => new PulsarExclusive(name, { subscription: "conformance" }),
    singleCapabilities,
    timing,
  );
  credentialsSuite((name) => new PulsarExclusive(name, { subscription: "conformance" }));
});

describe("Failover", () => {
  everySuite(
    makeBroker,
    (name) => new PulsarFailover(name, { subscription: "conformance" }),
    singleCapabilities,
    timing,
  );
  credentialsSuite((name) => new PulsarFailover(name, { subscription: "conformance" }));
});
