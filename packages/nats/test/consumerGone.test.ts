import { jetstreamManager } from "@nats-io/jetstream";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { expect, it } from "vitest";
import { JetStreamSubject, NatsPublish } from "../src/index.js";
import { rawClient } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A consumer the server no longer has (deleted under a running subscription, as an operator or an
// inactive threshold would) is created again by the subscription, which goes on by itself.

const made = madeInEachTest();

it("a durable consumer deleted under a subscription is created again, and delivery goes on", async () => {
  const subject = uniqueName("gone");
  made.streams.push(subject);
  const connected = made.connection(await liveBroker().connect());
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
