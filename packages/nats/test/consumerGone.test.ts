import { jetstreamManager } from "@nats-io/jetstream";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
} from "../src/index.js";
import { deleteStreams, rawClient } from "./env.live.js";

// A consumer the server no longer has (deleted under a running subscription, as an operator or an
// inactive threshold would) is created again by the subscription, which goes on by itself.

let connected: ConnectedNatsBroker | undefined;
const streams: string[] = [];
afterEach(async () => {
  await connected?.shutdown();
  connected = undefined;
  await deleteStreams(...streams.splice(0));
});

it("a durable consumer deleted under a subscription is created again, and delivery goes on", async () => {
  const subject = uniqueName("gone");
  streams.push(subject);
  connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
  const subscription = await connected.subscribe(
    new JetStreamSubject(subject, {
      stream: subject,
      durable: "gone",
      pullExpiresMs: 1000,
      declare: { subjects: [subject], storage: "memory" },
    }),
  );
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  await publisher.publish({ name: subject, payload: bytes("before") });
  const first = (await subscription.next()).value;
  expect(first && text(first.payload)).toBe("before");
  await first?.ack();

  const nc = await rawClient();
  try {
    await (await jetstreamManager(nc)).consumers.delete(subject, "gone");
  } finally {
    await nc.close();
  }
  await publisher.publish({ name: subject, payload: bytes("after") });
  // The new consumer starts where the descriptor says (all): "before" again, then "after".
  const seen: string[] = [];
  while (!seen.includes("after")) {
    const d = (await subscription.next()).value;
    if (d === undefined) break;
    seen.push(text(d.payload));
    await d.ack();
  }
  expect(seen).toEqual(["before", "after"]);
});
