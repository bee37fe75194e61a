import { jetstream } from "@nats-io/jetstream";
import type { ConnectionChange } from "@ruststream/core";
import { requireEnv, TcpRelay, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { type ConnectedNatsBroker, JetStreamSubject, NatsBroker } from "../src/index.js";
import { deleteStreams, eventually, rawClient } from "./env.live.js";

// A push consumer with idle heartbeats, its connection through a relay that stalls (holds what
// either side sends, the connection left open): the server's heartbeats stop reaching the client,
// the connection's state is `lost` naming the consumer's missed heartbeats; once the stall ends,
// what the server pushed meanwhile arrives, every message once and in order, and the state is
// `connected` again.

let connected: ConnectedNatsBroker | undefined;
let relay: TcpRelay | undefined;
const streams: string[] = [];
afterEach(async () => {
  relay?.unstall();
  await connected?.shutdown();
  connected = undefined;
  await relay?.cut();
  relay = undefined;
  await deleteStreams(...streams.splice(0));
});

it("a stalled network: missed heartbeats make the state lost naming the consumer, then delivery resumes with nothing lost", async () => {
  const url = requireEnv("NATS_URL");
  const server = new URL(url);
  relay = new TcpRelay({ host: server.hostname, port: Number(server.port) });
  await relay.start();
  const changes: ConnectionChange[] = [];
  connected = await new NatsBroker({ servers: relay.url(url) }).connect({
    onState: (change) => changes.push(change),
  });
  const subject = uniqueName("heartbeats");
  streams.push(subject);
  const subscription = await connected.subscribe(
    new JetStreamSubject(subject, {
      stream: subject,
      durable: "beating",
      push: { declare: { deliverSubject: `${subject}.deliver`, idleHeartbeatMs: 500 } },
      declare: { subjects: [subject], storage: "memory" },
    }),
  );
  // Published past the relay, from the server's side.
  const nc = await rawClient();
  try {
    const js = jetstream(nc);
    await js.publish(subject, "m0");
    const first = (await subscription.next()).value;
    expect(first && text(first.payload)).toBe("m0");
    await first?.ack();

    relay.stall();
    const sent = ["m1", "m2", "m3", "m4", "m5"];
    for (const m of sent) await js.publish(subject, m);
    await eventually(
      () => changes.some((c) => c.state === "lost"),
      15_000,
      "the state lost on missed heartbeats",
    );
    const lost = changes.find((c) => c.state === "lost");
    expect(lost?.reason).toMatch(
      new RegExp(
        `the push consumer "beating" on the JetStream stream "${subject}" missed \\d+ heartbeat`,
      ),
    );
    expect(connected.state).toBe("lost");

    relay.unstall();
    const seen: string[] = [];
    while (seen.length < sent.length) {
      const d = (await subscription.next()).value;
      if (d === undefined) break;
      seen.push(text(d.payload));
      await d.ack();
    }
    expect(seen).toEqual(sent);
    await eventually(() => connected?.state === "connected", 15_000, "the state connected again");
    expect(changes.map((c) => c.state)).toEqual(["lost", "connected"]);
  } finally {
    await nc.close();
  }
});
