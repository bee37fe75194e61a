import { requireEnv } from "@ruststream/tooling-testkit";
import { describe } from "vitest";
import { NatsBroker } from "../src/index.js";
import { jetStreamCapabilities } from "./capabilities.js";
import { jetStreamSource } from "./sources.js";
import { everySuite } from "./suites.js";

// JetStream pull consumers against the real server: each suite's subject on a stream of its own.
describe("JetStream", () => {
  everySuite(
    () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
    jetStreamSource,
    jetStreamCapabilities,
    { arrivalMs: 5000, silenceMs: 300 },
    { jetStream: true },
  );
});
