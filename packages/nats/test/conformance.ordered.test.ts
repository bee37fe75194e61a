import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterAll, describe } from "vitest";
import { NatsBroker } from "../src/index.js";
import { orderedCapabilities } from "./capabilities.js";
import { orderedSource, streamsMade } from "./sources.js";
import { everySuite } from "./suites.js";

// JetStream ordered consumers against the real server: each suite's subject on a stream of its own.
describe("JetStream ordered", () => {
  everySuite(
    () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
    orderedSource,
    orderedCapabilities,
    { arrivalMs: 5000, silenceMs: 300 },
    { jetStream: true },
  );
});

// The server outlives the run: the streams the suites made go with it.
afterAll(async () => {
  const nc = await connect({ servers: requireEnv("NATS_URL") });
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of streamsMade) await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
});
