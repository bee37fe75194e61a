import { HeaderMap, ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  type JetStreamPublisher,
  NatsBroker,
  NatsPublish,
  type NatsReceipt,
} from "../src/index.js";
import { runChild } from "./child/runChild.js";

// The stand-in's schedules and its connections' lifetime: a repeating schedule's timer stops when
// the last connection to the stand-in closes (the schedule stays, as the server keeps it, and runs
// again on the next connection), and on a real clock it holds no process by itself.

async function openTicks(broker: NatsBroker, clock: ManualClock): Promise<ConnectedNatsBroker> {
  const connected = await broker.connectInProcess({
    coordinator: new CountingCoordinator(),
    clock,
  });
  await connected.link.ensureStream("ticks", ["ticks.>"], {
    subjects: ["ticks.>"],
    storage: "memory",
    messageSchedules: true,
  });
  return connected;
}

describe("the stand-in's repeating schedules and its connections", () => {
  it("closing the last connection stops the timer (no delivery while closed); the next connection runs the kept schedule again", async () => {
    const clock = new ManualClock();
    const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
    const first = await openTicks(broker, clock);
    const publisher = await new NatsPublish({ jetStream: true }).pair(first);
    const receipt = (await publisher.publish({
      name: "ticks.schedule",
      payload: bytes("tick"),
      headers: new HeaderMap(),
      options: { schedule: { everyMs: 1000, target: "ticks.due" } },
    })) as NatsReceipt;
    clock.advance(1000);
    // The schedule at 1, its first delivery at 2.
    expect(receipt.sequence).toBe(1n);
    expect((await first.link.message("ticks", { lastOn: "ticks.due" }))?.sequence).toBe(2n);
    expect(clock.pendingTimers).toBe(1);
    await first.shutdown();
    // The timer is gone: the clock has nothing left to fire, however far it moves.
    expect(clock.pendingTimers).toBe(0);
    clock.advance(10_000);

    const second = await openTicks(broker, clock);
    // Before the clock moves again, what the stream holds is what it held at the close.
    expect(await second.link.streamBounds("ticks")).toEqual({ first: 1n, last: 2n });
    expect((await second.link.message("ticks", { lastOn: "ticks.schedule" }))?.sequence).toBe(1n);
    // The schedule fell due while closed: it delivers once, at once, then every second again.
    clock.advance(0);
    expect((await second.link.streamBounds("ticks")).last).toBe(3n);
    clock.advance(1000);
    expect((await second.link.streamBounds("ticks")).last).toBe(4n);
    await second.shutdown();
    expect(clock.pendingTimers).toBe(0);
  });

  it("a cancelled schedule's timer goes with it", async () => {
    const clock = new ManualClock();
    const connected = await openTicks(
      new NatsBroker({ servers: "nats://in-process.invalid:4222" }),
      clock,
    );
    const publisher = (await new NatsPublish({ jetStream: true }).pair(
      connected,
    )) as JetStreamPublisher;
    await publisher.publish({
      name: "ticks.schedule",
      payload: bytes("tick"),
      options: { schedule: { everyMs: 1000, target: "ticks.due" } },
    });
    expect(clock.pendingTimers).toBe(1);
    expect(await publisher.cancelSchedule("ticks.schedule")).toBe(true);
    expect(clock.pendingTimers).toBe(0);
    await connected.shutdown();
  });

  it("a cron schedule runs on the stand-in's clock: 09:00 in Asia/Kolkata arrives at 03:30 UTC, not a second before, then daily; past several times with no connection open, it fires once on the next, then at its next time", async () => {
    const clock = new ManualClock();
    const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
    const first = await openTicks(broker, clock);
    const publisher = await new NatsPublish({ jetStream: true }).pair(first);
    const published = Date.now();
    await publisher.publish({
      name: "ticks.daily",
      payload: bytes("daily"),
      options: { schedule: { cron: "0 0 9 * * *", timeZone: "Asia/Kolkata", target: "ticks.due" } },
    });
    const day = 86_400_000;
    const offset = 3.5 * 3_600_000;
    // The first 03:30 UTC after the publish, and the day of one as the zone writes its 09:00.
    const due = Math.floor((published - offset) / day) * day + offset + day;
    const nineOn = (ms: number) => `${new Date(ms).toISOString().slice(0, 10)}T09:00:00+05:30`;
    const lastDue = async (connected: ConnectedNatsBroker) =>
      connected.link.message("ticks", { lastOn: "ticks.due" });
    clock.advance(due - published - 1000);
    expect(await lastDue(first)).toBeUndefined();
    clock.advance(1000);
    const delivered = await lastDue(first);
    expect([delivered?.sequence, delivered?.headers.getString("Nats-Schedule-Next")]).toEqual([
      2n,
      nineOn(due + day),
    ]);
    clock.advance(day);
    expect((await lastDue(first))?.headers.getString("Nats-Schedule-Next")).toBe(
      nineOn(due + 2 * day),
    );
    await first.shutdown();
    clock.advance(3 * day);

    const second = await openTicks(broker, clock);
    clock.advance(0);
    // Once for the times missed, and its next time the one after now, as the server skips ahead.
    const caughtUp = await lastDue(second);
    expect([caughtUp?.sequence, caughtUp?.headers.getString("Nats-Schedule-Next")]).toEqual([
      4n,
      nineOn(due + 5 * day),
    ]);
    clock.advance(day - 1000);
    expect((await second.link.streamBounds("ticks")).last).toBe(4n);
    clock.advance(1000);
    expect((await lastDue(second))?.sequence).toBe(5n);
    await second.shutdown();
  });

  for (const mode of ["close", "open"] as const) {
    it(`a process running the stand-in on a real clock with a repeating schedule exits by itself, its connection ${mode === "close" ? "shut down" : "left open"}`, async () => {
      const { code, out } = await runChild("standInSchedule.ts", mode);
      expect([code, out]).toEqual([0, `delivered, ${mode}\n`]);
    }, 30_000);
  }
});
