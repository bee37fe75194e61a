import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterAll, describe } from "vitest";
import { NatsBroker } from "../src/index.js";
import { kvWatchCapabilities } from "./capabilities.js";
import { bucketsMade, kvSource } from "./sources.js";
import { everySuite } from "./suites.js";

// KV watches against the real server: each suite's messages put to a key of a bucket of its own.
describe("KV watch", () => {
  everySuite(
    () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
    kvSource,
    kvWatchCapabilities,
    { arrivalMs: 5000, silenceMs: 300 },
    { jetStream: true, kv: true },
  );
});

// The server outlives the run: the buckets the suites made go with it.
afterAll(async () => {
  const nc = await connect({ servers: requireEnv("NATS_URL") });
  try {
    const jsm = await jetstreamManager(nc);
    for (const bucket of bucketsMade)
      await jsm.streams.delete(`KV_${bucket}`).catch(() => undefined);
  } finally {
    await nc.close();
  }
});
