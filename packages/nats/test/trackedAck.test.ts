import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { JetStreamSubject, NatsBroker, NatsPublish } from "../src/index.js";
import { consumerState } from "./env.live.js";
import { openedPerTest } from "./targets.js";

// With commit "tracked" an ack resolves once the server confirmed it. The package holds a turn's
// other settlements (here drops, `+TERM`) to the turn's end, and a confirmed ack writes them ahead
// of itself, so once it resolves the server has every settlement made before it. Read right after
// the ack resolved, the connection still open. What it holds: the tracked path with held drops
// beside it loses none. What it cannot hold: the order alone. With the write-first taken out it
// passed too, as the turn's end (where the drops go out anyway) comes before the confirmation's
// round trip does; the order rests on the code (client/natsLink.ts, ackConfirmed).

const count = 50;
const { connections, streams } = openedPerTest();

describe("a tracked ack after drops of the same turn, on the real server", () => {
  it("resolves once the server has the drops too: nothing pending, the ack floor at the last", async () => {
    const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    connections.push(connected);
    const stream = uniqueName("tracked");
    streams.push(stream);
    const subscription = await connected.subscribe(
      new JetStreamSubject(stream, {
        stream,
        durable: "worker",
        commit: "tracked",
        declare: { subjects: [stream], storage: "memory" },
      }),
    );
    const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
    for (let i = 0; i < count; i++)
      await publisher.publish({ name: stream, payload: bytes(`${i}`) });
    const deliveries = [];
    for (let i = 0; i < count; i++) {
      const d = (await subscription.next()).value;
      if (d === undefined) throw new Error(`delivery ${i} of ${count} did not come`);
      expect(text(d.payload)).toBe(`${i}`);
      deliveries.push(d);
    }
    const last = deliveries.pop();
    for (const d of deliveries) d.nack({ requeue: false });
    await last?.ack();
    expect(await consumerState(stream, "worker")).toMatchObject({
      redelivered: 0,
      ackPending: 0,
      ackFloor: count,
    });
  });
});
