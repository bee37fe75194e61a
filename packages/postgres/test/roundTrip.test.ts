import { runtimeTitle } from "@ruststream/core/broker";
import { requireEnv, roundTrip } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { PostgresBroker } from "../src/index.js";

// The round trip every broker runs on each supported runtime (tooling/testkit's roundTrip.ts), on
// the real server through pg: the Bun and Deno lines of `npm test` run this file on those runtimes.
test(`PostgreSQL through pg on ${runtimeTitle()}: three messages handled, a request answered, a clean stop`, () =>
  roundTrip({
    broker: new PostgresBroker({ url: requireEnv("POSTGRES_URL"), ensureSchema: true }),
    request: true,
  }));
