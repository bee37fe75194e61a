import { ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { expect, it } from "vitest";
import {
  JetStreamSubject,
  type JetStreamSubscription,
  NatsBroker,
  NatsPublish,
} from "../src/index.js";

// The pulls ask ahead only while the subscription has room: a subscription nobody takes from holds
// at most `fetchSize` deliveries besides the ones handed out. On the stand-in, which hands a
// client's pulls messages while the subscription has room and at once, as the client's loop reads
// them: what the subscription holds when it is given back (`surrender()` counts it) is bounded,
// however long the stream.

it("a subscription nobody takes from holds the one taken and fetchSize more, of 200 waiting", async () => {
  const connected = await new NatsBroker({
    servers: "nats://in-process.invalid:4222",
  }).connectInProcess({ coordinator: new CountingCoordinator(), clock: new ManualClock() });
  try {
    const subject = uniqueName("bound");
    const fetchSize = 10;
    const subscription = (await connected.subscribe(
      new JetStreamSubject(subject, {
        stream: subject,
        durable: "bound",
        fetchSize,
        declare: { subjects: [subject], storage: "memory" },
      }),
    )) as JetStreamSubscription;
    const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
    for (let i = 0; i < 200; i++)
      await publisher.publish({ name: subject, payload: bytes(`${i}`) });
    const first = (await subscription.next()).value;
    expect(first && text(first.payload)).toBe("0");
    expect(await subscription.surrender()).toBe(1 + fetchSize);
  } finally {
    await connected.shutdown();
  }
});
