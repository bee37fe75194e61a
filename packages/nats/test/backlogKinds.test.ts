import { bytes, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  type JetStreamSubscription,
  NatsPublish,
  OrderedJetStreamSubject,
} from "../src/index.js";
import { eventually } from "./env.live.js";
import { openedPerTest, targets } from "./targets.js";

// The backlog of an ephemeral pull consumer and of an ordered one, on the server and on the
// stand-in: before any pull (a subscription pulls from its first next()) the stored messages are
// all ready; once the pulls took them, none is, and the ephemeral consumer's are leased until
// acked (the ordered consumer takes no acks: ready only).

const opened = openedPerTest();

async function setUp(connect: () => Promise<ConnectedNatsBroker>) {
  const subject = uniqueName("kinds");
  const connected = await connect();
  opened.connections.push(connected);
  opened.streams.push(subject);
  await connected.link.ensureStream(subject, [subject], { storage: "memory" });
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  for (const p of ["1", "2", "3"]) await publisher.publish({ name: subject, payload: bytes(p) });
  return { subject, connected };
}

describe.each(targets)("a subscription's backlog on %s", (_name, connect) => {
  it("an ephemeral pull consumer: 3 ready before the pulls, then 3 leased, then none once acked", async () => {
    const { subject, connected } = await setUp(connect);
    const subscription = (await connected.subscribe(
      new JetStreamSubject(subject, { stream: subject }),
    )) as JetStreamSubscription;
    expect(await subscription.backlog()).toEqual({ ready: 3, leased: 0 });
    const first = (await subscription.next()).value;
    await eventually(
      async () => (await subscription.backlog()).leased === 3,
      10_000,
      "the three delivered",
    );
    expect(await subscription.backlog()).toEqual({ ready: 0, leased: 3 });
    await first?.ack();
    for (let i = 0; i < 2; i++) await (await subscription.next()).value?.ack();
    await eventually(
      async () => (await subscription.backlog()).leased === 0,
      10_000,
      "the acks heard",
    );
    expect(await subscription.backlog()).toEqual({ ready: 0, leased: 0 });
  });

  it("an ordered consumer: 3 ready before the pulls, none once they took them; no leased", async () => {
    const { subject, connected } = await setUp(connect);
    const subscription = (await connected.subscribe(
      new OrderedJetStreamSubject(subject, { stream: subject }),
    )) as JetStreamSubscription;
    expect(await subscription.backlog()).toEqual({ ready: 3 });
    await subscription.next();
    await eventually(
      async () => (await subscription.backlog()).ready === 0,
      10_000,
      "the three delivered",
    );
    expect(await subscription.backlog()).toEqual({ ready: 0 });
  });
});
