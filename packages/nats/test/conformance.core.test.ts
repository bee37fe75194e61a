import { conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import { describe } from "vitest";
import { NatsBroker } from "../src/index.js";
import { coreCapabilities } from "./capabilities.js";
import { signedCreds } from "./env.js";
import { coreSource } from "./sources.js";
import { everySuite } from "./suites.js";

// Core NATS against the real server: fire-and-forget, so the scenarios that need a settle verb or
// a durable subscription show in the tally as skipped, with the reason.
describe("core NATS", () => {
  everySuite(
    () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
    coreSource,
    coreCapabilities,
    { arrivalMs: 5000, silenceMs: 300 },
    { jetStream: false },
  );
  // A real connection carrying the suite's secret: a user the account signed, named by the secret.
  conformance.credentials({
    makeBroker: (secret) =>
      new NatsBroker({
        servers: requireEnv("NATS_JWT_URL"),
        credentials: { creds: signedCreds(secret) },
      }),
    makeSource: coreSource,
  });
});
