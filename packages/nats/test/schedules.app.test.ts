import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { JetStreamSubject, NatsBroker } from "../src/index.js";
import { eventually } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A whole app scheduling through ctx.out: its handler for a placed order schedules a reminder
// 1.5 s ahead (a message schedule), and a second handler reads the reminder on its target when
// the stream delivers it; in-process (on the test's clock) and on the real server. The broker
// publishes to JetStream (`publish: { jetStream: true }`): a schedule is a stream's.

const made = madeInEachTest();

interface Reminder {
  readonly id: number;
  readonly at: number;
  readonly handledAt: number;
}

function remindersApp(broker: NatsBroker, stream: string, reminders: Reminder[]) {
  const declare = { subjects: [`${stream}.>`], storage: "memory", messageSchedules: true } as const;
  return new RustStream({ name: "reminders", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<{ id: number }>(new JetStreamSubject(`${stream}.placed`, { stream, declare }))
      .publishes({ reminder: `${stream}.schedules.reminder` })
      .handle(async (order, ctx) => {
        const at = new Date(Date.now() + 1500);
        await ctx.out.reminder.publish(
          { id: order.id, at: at.getTime() },
          { options: { schedule: { at, target: `${stream}.due` } } },
        );
      });
    b.subscriber<{ id: number; at: number }>(
      new JetStreamSubject(`${stream}.due`, { stream, declare }),
    ).handle(async (due) => {
      reminders.push({ ...due, handledAt: Date.now() });
    });
  });
}

describe("an app scheduling a message through ctx.out", () => {
  it("in-process: the reminder is handled once the test's clock reaches its time", async () => {
    const stream = uniqueName("remind");
    const reminders: Reminder[] = [];
    const t = made.app(
      await TestApp.start(
        remindersApp(
          new NatsBroker({
            servers: "nats://in-process.invalid:4222",
            publish: { jetStream: true },
          }),
          stream,
          reminders,
        ),
      ),
    );
    // t.publish resolves once the whole reaction ran: the schedule is stored, nothing is due yet.
    await t.publish(`${stream}.placed`, { id: 7 });
    expect(t.published(`${stream}.schedules.reminder`)).toHaveLength(1);
    expect(reminders).toEqual([]);
    await t.advance(1000);
    expect(reminders).toEqual([]);
    await t.advance(1000);
    expect(reminders.map((r) => r.id)).toEqual([7]);
  });

  it("on the real server: the reminder is handled at or after its time", async () => {
    const stream = uniqueName("remind");
    made.streams.push(stream);
    const reminders: Reminder[] = [];
    const t = made.app(
      await TestApp.startLive(
        remindersApp(liveBroker({ publish: { jetStream: true } }), stream, reminders),
        { withinMs: 20_000 },
      ),
    );
    await t.running.publish(`${stream}.placed`, { id: 7 });
    await eventually(() => reminders.length === 1, 10_000, "the reminder handled");
    const [reminder] = reminders;
    expect(reminder?.id).toBe(7);
    expect(reminder?.handledAt).toBeGreaterThanOrEqual(reminder?.at ?? Number.POSITIVE_INFINITY);
  });
});
