import { requireEnv } from "@ruststream/tooling-testkit";
import { describe } from "vitest";
import { PulsarBroker, PulsarKeyShared, PulsarShared } from "../src/index.js";
import { sharedCapabilities } from "./capabilities.js";
import { credentialsSuite, everySuite } from "./conformance.js";

// Every suite on Shared and Key_Shared subscriptions against the real broker: each call of
// makeBroker is a new client of the same standalone.
const makeBroker = () => new PulsarBroker({ url: requireEnv("PULSAR_URL") });
const timing = { arrivalMs: 10_000, silenceMs: 300 };

describe("Shared", () => {
  everySuite(
    makeBroker,
    (name) => new PulsarShared(name, { subscription: "conformance" }),
    sharedCapabilities,
    timing,
  );
  credentialsSuite((name) => new PulsarShared(name, { subscription: "conformance" }));
});

describe("Key_Shared", () => {
  everySuite(
    makeBroker,
    (name) => new PulsarKeyShared(name, { subscription: "conformance" }),
    sharedCapabilities,
    timing,
  );
  credentialsSuite((name) => new PulsarKeyShared(name, { subscription: "conformance" }));
});
