import { runtimeTitle } from "@ruststream/core/broker";
import { requireEnv, roundTrip } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { PulsarBroker } from "../src/index.js";

// The round trip every broker runs on each supported runtime (tooling/testkit's roundTrip.ts), on
// the real server through the package's own client: the Bun and Deno lines of `npm test` run this
// file on those runtimes.
test(`Pulsar on ${runtimeTitle()}: three messages handled, a request answered, a clean stop`, () =>
  roundTrip({ broker: new PulsarBroker({ url: requireEnv("PULSAR_URL") }), request: true }));
