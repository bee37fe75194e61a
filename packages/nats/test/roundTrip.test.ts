import { runtimeTitle } from "@ruststream/core/broker";
import { requireEnv, roundTrip } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { NatsBroker } from "../src/index.js";

// The round trip every broker runs on each supported runtime (tooling/testkit's roundTrip.ts), on
// the real server through @nats-io's client: the Bun and Deno lines of `npm test` run this file on
// those runtimes.
test(`NATS on ${runtimeTitle()}: three messages handled, a request answered, a clean stop`, () =>
  roundTrip({ broker: new NatsBroker({ servers: requireEnv("NATS_URL") }), request: true }));
