import { ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  type CoreSubscription,
  NatsBroker,
  NatsSubject,
} from "../src/index.js";
import { rawClient } from "./env.live.js";

// What bounds a subscription against a flood or odd input: core NATS pushes whatever is published,
// so what waits for the handler is capped; a header value that is not one line of text is carried
// encoded and read back to its bytes, and a plain client's text that looks encoded is still text.

const connections: ConnectedNatsBroker[] = [];
afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => c.shutdown()));
});

const targets: [string, () => Promise<ConnectedNatsBroker>][] = [
  ["the real server", () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect()],
  [
    "the stand-in",
    () =>
      new NatsBroker({ servers: "nats://in-process.invalid:4222" }).connectInProcess({
        coordinator: new CountingCoordinator(),
        clock: new ManualClock(),
      }),
  ],
];

for (const [where, connect] of targets) {
  describe(`limits, ${where}`, () => {
    it("a core subscription keeps at most maxBuffered waiting and counts the rest as dropped", async () => {
      const connected = await connect();
      connections.push(connected);
      const subject = uniqueName("flood");
      const subscription = (await connected.subscribe(
        new NatsSubject(subject, { maxBuffered: 3 }),
      )) as CoreSubscription;
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      for (let i = 0; i < 5; i++)
        await publisher.publish({ name: subject, payload: bytes(`m${i}`) });
      const got = await subscription.nextBatch(10);
      expect(got.map((d) => text(d.payload))).toEqual(["m0", "m1", "m2"]);
      expect(subscription.dropped).toBe(2);
      for (const d of got) await d.ack();
    });
  });
}

describe("header values from a plain NATS client", () => {
  it("text that starts like an encoded value but is not base64 of anything sent stays bounded", async () => {
    const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    connections.push(connected);
    const subject = uniqueName("odd-header");
    const subscription = await connected.subscribe(subject);
    const nc = await rawClient();
    try {
      const { headers } = await import("@nats-io/transport-node");
      const h = headers();
      h.set("x-odd", "=?rs-b64?!!not base64!!");
      nc.publish(subject, "x", { headers: h });
      await nc.flush();
    } finally {
      await nc.close();
    }
    const d = (await subscription.next()).value;
    // Decoded as base64 (the prefix is ours): whatever it reads is no longer than what was sent.
    expect(d?.headers.get("x-odd")?.length ?? 0).toBeLessThan(20);
  });
});
