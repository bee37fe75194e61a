import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterAll, describe } from "vitest";
import { NatsBroker } from "../src/index.js";
import { pushCapabilities } from "./capabilities.js";
import { pushSource, streamsMade } from "./sources.js";
import { everySuite } from "./suites.js";

// JetStream push consumers against the real server: each suite's subject on a stream of its own,
// its durable push consumer declared with a deliver subject of its own.
describe("JetStream push consumers", () => {
  everySuite(
    () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
    pushSource,
    pushCapabilities,
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
