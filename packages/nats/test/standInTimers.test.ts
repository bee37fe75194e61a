import { ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import type { Stored } from "../src/client/link.js";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
} from "../src/index.js";
import { runChild } from "./child/runChild.js";

// The stand-in's other timers and its connections' lifetime, as its schedules'
// (test/standInSchedules.test.ts): a message's own TTL and a consumer's ack wait stop when the last
// connection to the stand-in closes (kept, as the server keeps them, and run again on the next
// connection), and on a real clock a long TTL holds no process by itself.

const ackWaitMs = 30_000;
const ttlMs = 60_000;

describe("the stand-in's TTL and ack-wait timers and its connections", () => {
  it("closing the last connection stops a TTL's and an ack wait's timers; the next connection runs both again", async () => {
    const clock = new ManualClock();
    const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
    const connect = () =>
      broker.connectInProcess({ coordinator: new CountingCoordinator(), clock });
    const source = new JetStreamSubject("kept.one", {
      stream: "kept",
      durable: "worker",
      ackWaitMs,
      declare: { subjects: ["kept.>"], storage: "memory", messageTtl: true },
    });
    const spec = {
      stream: "kept",
      durable: "worker",
      subjects: ["kept.one"],
      settings: source.settings,
    };
    /** The durable's deliveries on `connected`, as they arrive, until its pull is stopped. */
    async function pulled(connected: ConnectedNatsBroker) {
      const arrived: Stored[] = [];
      const consumer = await connected.link.consumer(spec);
      const request = consumer.pull(10, 30_000, {
        arrived: (m) => arrived.push(m),
        room: () => undefined,
        accepted: () => {},
        missed: () => {},
      });
      return { arrived, stop: () => request.stop() };
    }

    const first = await connect();
    await first.link.ensureStream("kept", ["kept.>"], source.declare ?? {});
    const publisher = await new NatsPublish({ jetStream: true }).pair(first);
    await publisher.publish({ name: "kept.one", payload: bytes("one"), options: { ttlMs } });
    // Delivered and left unsettled: its ack wait runs, beside the message's TTL.
    const taken = await pulled(first);
    expect(taken.arrived.map((m) => [text(m.payload), m.deliveryCount])).toEqual([["one", 1]]);
    expect(clock.pendingTimers).toBe(2);
    taken.stop();
    await first.shutdown();
    // Both timers are gone: the clock has nothing left to fire.
    expect(clock.pendingTimers).toBe(0);
    clock.advance(ackWaitMs + 1);

    const second = await connect();
    expect(clock.pendingTimers).toBe(2);
    const again = await pulled(second);
    // Nothing ran while closed: no redelivery until the clock moves.
    expect(again.arrived).toEqual([]);
    // The ack wait fell due while closed: the durable's message comes again at once.
    clock.advance(0);
    expect(again.arrived.map((m) => [text(m.payload), m.deliveryCount])).toEqual([["one", 2]]);
    again.arrived[0]?.ack();
    expect((await second.link.message("kept", { lastOn: "kept.one" }))?.sequence).toBe(1n);
    // The TTL, kept too, runs out on the test's clock: the message is gone.
    clock.advance(ttlMs);
    expect(await second.link.message("kept", { lastOn: "kept.one" })).toBeUndefined();
    again.stop();
    await second.shutdown();
    expect(clock.pendingTimers).toBe(0);
  });

  for (const mode of ["close", "open"] as const) {
    it(`a process running the stand-in on a real clock with an hour's TTL pending exits by itself, its connection ${mode === "close" ? "shut down" : "left open"}`, async () => {
      const { code, out } = await runChild("standInTtl.ts", mode);
      expect([code, out]).toEqual([0, `stored, ${mode}\n`]);
    }, 30_000);
  }
});
