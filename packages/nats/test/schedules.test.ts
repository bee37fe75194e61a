import { HeaderMap, isRustStreamError } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { NatsPublish, type NatsReceipt } from "../src/index.js";
import { eventually } from "./env.live.js";
import { refusal, scheduleStreams } from "./scheduleSupport.js";
import { targets } from "./targets.js";

// Message schedules (NATS 2.12): a publish kept on its schedule subject and delivered to its
// target at its time, once (`at`) or repeatedly (`everyMs`, a cron pattern), and
// refused by a stream that takes none. On the real server and on the stand-in alike; the stand-in
// runs on a ManualClock, moved by the test where the server's time passes by itself.

const setUp = scheduleStreams();

for (const [where, connect] of targets) {
  describe(`message schedules, ${where}`, () => {
    it("a message scheduled 1.5 s ahead is not on its target before its time, then arrives once, its schedule removed", async () => {
      const { connected, stream, target, publisher, last, advance, manual } = await setUp(connect);
      const schedule = `${stream}.schedules.order-7`;
      const at = new Date(Date.now() + 1500);
      const receipt = (await publisher.publish({
        name: schedule,
        payload: bytes("order 7 is due"),
        headers: new HeaderMap([["order", "7"]]),
        options: { schedule: { at, target } },
      })) as NatsReceipt;
      // Well before its time: the schedule is the stream's last message, the target holds none.
      expect(await last(target)).toBeUndefined();
      const held = await last(schedule);
      expect([held?.sequence, held?.headers.getString("Nats-Schedule")]).toEqual([
        receipt.sequence,
        `@at ${at.toISOString()}`,
      ]);
      expect((await connected.link.streamBounds(stream)).last).toBe(receipt.sequence);
      if (manual) {
        advance(1000);
        expect(await last(target)).toBeUndefined();
        advance(1000);
      }
      await eventually(async () => (await last(target)) !== undefined, 10_000, "the delivery");
      const delivered = await last(target);
      if (!manual) expect(delivered?.time.getTime()).toBeGreaterThanOrEqual(at.getTime());
      expect(text(delivered?.payload ?? bytes(""))).toBe("order 7 is due");
      expect([
        delivered?.sequence,
        delivered?.headers.getString("order"),
        delivered?.headers.getString("Nats-Scheduler"),
        delivered?.headers.getString("Nats-Schedule-Next"),
        delivered?.headers.has("Nats-Schedule"),
      ]).toEqual([receipt.sequence + 1n, "7", schedule, "purge", false]);
      // Once: the schedule went with its delivery, nothing is left to fire again.
      expect(await last(schedule)).toBeUndefined();
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: receipt.sequence + 1n,
        last: receipt.sequence + 1n,
      });
    });

    it("a schedule published again on its subject replaces the one before: only the second is delivered", async () => {
      const { connected, stream, target, publisher, last, advance } = await setUp(connect);
      const schedule = `${stream}.schedules.reminder`;
      const now = Date.now();
      await publisher.publish({
        name: schedule,
        payload: bytes("first"),
        options: { schedule: { at: new Date(now + 1500), target } },
      });
      const second = (await publisher.publish({
        name: schedule,
        payload: bytes("second"),
        options: { schedule: { at: new Date(now + 2000), target } },
      })) as NatsReceipt;
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: second.sequence,
        last: second.sequence,
      });
      advance(2500);
      await eventually(async () => (await last(target)) !== undefined, 10_000, "the delivery");
      const delivered = await last(target);
      expect([text(delivered?.payload ?? bytes("")), delivered?.sequence]).toEqual([
        "second",
        second.sequence + 1n,
      ]);
      expect(await last(schedule)).toBeUndefined();
    });

    it("a repeating schedule (everyMs) delivers again and stays", async () => {
      const { connected, stream, target, publisher, last, advance } = await setUp(connect);
      const schedule = `${stream}.schedules.tick`;
      const receipt = (await publisher.publish({
        name: schedule,
        payload: bytes("tick"),
        options: { schedule: { everyMs: 1000, target } },
      })) as NatsReceipt;
      expect(await last(target)).toBeUndefined();
      advance(1000);
      await eventually(async () => (await last(target)) !== undefined, 10_000, "a delivery");
      advance(1000);
      await eventually(
        async () => ((await last(target))?.sequence ?? 0n) >= receipt.sequence + 2n,
        10_000,
        "a second delivery",
      );
      const delivered = await last(target);
      const next = Date.parse(delivered?.headers.getString("Nats-Schedule-Next") ?? "");
      expect(next).toBeGreaterThan(Date.now() - 1000);
      expect(text(delivered?.payload ?? bytes(""))).toBe("tick");
      expect((await last(schedule))?.sequence).toBe(receipt.sequence);
      expect((await connected.link.streamBounds(stream)).first).toBe(receipt.sequence);
    });

    it("a schedule cancelled before its time never arrives: a later one on the same target arrives alone", async () => {
      const { connected, stream, target, publisher, last, advance } = await setUp(connect);
      const cancelled = `${stream}.schedules.cancelled`;
      const sentinel = `${stream}.schedules.sentinel`;
      const now = Date.now();
      await publisher.publish({
        name: cancelled,
        payload: bytes("cancelled"),
        options: { schedule: { at: new Date(now + 2000), target } },
      });
      expect(await publisher.cancelSchedule(cancelled)).toBe(true);
      expect(await last(cancelled)).toBeUndefined();
      // Nothing pending there any more.
      expect(await publisher.cancelSchedule(cancelled)).toBe(false);
      // Due after the cancelled one's time: had that one fired, its delivery would come first.
      const later = (await publisher.publish({
        name: sentinel,
        payload: bytes("sentinel"),
        options: { schedule: { at: new Date(now + 2500), target } },
      })) as NatsReceipt;
      advance(3000);
      await eventually(async () => (await last(target)) !== undefined, 10_000, "the sentinel");
      const delivered = await last(target);
      expect([
        text(delivered?.payload ?? bytes("")),
        delivered?.headers.getString("Nats-Scheduler"),
        delivered?.sequence,
      ]).toEqual(["sentinel", sentinel, later.sequence + 1n]);
      // The stream holds the sentinel's delivery alone: no other delivery was ever stored.
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: later.sequence + 1n,
        last: later.sequence + 1n,
      });
    });

    it("cancelSchedule refuses a subject holding a message that is no schedule (it stays), a wildcard, and one no stream stores", async () => {
      const { connected, stream, publisher, last } = await setUp(connect);
      const plain = `${stream}.plain`;
      const stored = (await publisher.publish({
        name: plain,
        payload: bytes("keep me"),
      })) as NatsReceipt;
      const notASchedule = await refusal(publisher.cancelSchedule(plain));
      expect(isRustStreamError(notASchedule, "invalid-argument"), String(notASchedule)).toBe(true);
      expect(String(notASchedule)).toContain("is not a schedule: nothing was removed");
      expect((await last(plain))?.sequence).toBe(stored.sequence);
      const wildcard = await refusal(publisher.cancelSchedule(`${stream}.schedules.*`));
      expect(isRustStreamError(wildcard, "invalid-argument"), String(wildcard)).toBe(true);
      expect(String(wildcard)).toContain("without spaces or wildcards");
      const nowhere = await refusal(publisher.cancelSchedule(`${uniqueName("none")}.schedule`));
      expect(isRustStreamError(nowhere, "broker-failure"), String(nowhere)).toBe(true);
      expect(String(nowhere)).toContain("no JetStream stream stores");
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: stored.sequence,
        last: stored.sequence,
      });
    });

    it("a cron schedule in a time zone delivers each second it names and stays, its next time written in the zone; a pattern or zone the server cannot read is refused", async () => {
      const { stream, target, publisher, last, advance } = await setUp(connect);
      const schedule = `${stream}.schedules.cron`;
      const receipt = (await publisher.publish({
        name: schedule,
        payload: bytes("every second"),
        // A zone without DST, half an hour off the hour: its offset shows in the next time.
        options: { schedule: { cron: "* * * * * *", timeZone: "Asia/Kolkata", target } },
      })) as NatsReceipt;
      advance(1000);
      await eventually(async () => (await last(target)) !== undefined, 10_000, "a delivery");
      advance(1000);
      await eventually(
        async () => ((await last(target))?.sequence ?? 0n) >= receipt.sequence + 2n,
        10_000,
        "a second delivery",
      );
      const delivered = await last(target);
      const next = delivered?.headers.getString("Nats-Schedule-Next") ?? "";
      expect([
        text(delivered?.payload ?? bytes("")),
        delivered?.headers.getString("Nats-Scheduler"),
        delivered?.headers.has("Nats-Schedule"),
      ]).toEqual(["every second", schedule, false]);
      expect(next).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+05:30$/);
      expect((await last(schedule))?.sequence).toBe(receipt.sequence);

      const unreadable = [
        { cron: "0 0 9 * * *", timeZone: "Nowhere/Atlantis" },
        { cron: "0 0 9 * * *", timeZone: "europe/berlin" },
        { cron: "0 0 9 * *" },
        { cron: "0 0 9 * * 7" },
        { cron: "0 0 9 L * *" },
        { cron: "0 0 0 30 2 *" },
      ];
      for (const pattern of unreadable) {
        const error = await refusal(
          publisher.publish({
            name: `${stream}.schedules.unreadable`,
            payload: bytes("x"),
            options: { schedule: { ...pattern, target } },
          }),
        );
        expect(isRustStreamError(error, "publish-refused"), JSON.stringify(pattern)).toBe(true);
        expect(String(error)).toContain("cannot read the message's schedule");
      }
      expect(await last(`${stream}.schedules.unreadable`)).toBeUndefined();
    });

    it("refused: by a stream that takes none (naming the option), for a target it does not store, and bad input before sending", async () => {
      const plain = await setUp(connect, { messageSchedules: false });
      const at = new Date(Date.now() + 60_000);
      const disabled = await refusal(
        plain.publisher.publish({
          name: `${plain.stream}.schedules.x`,
          payload: bytes("x"),
          options: { schedule: { at, target: plain.target } },
        }),
      );
      expect(isRustStreamError(disabled, "unsupported"), String(disabled)).toBe(true);
      expect(String(disabled)).toContain(
        `the stream that stores "${plain.stream}.schedules.x" takes no message schedules`,
      );
      expect(String(disabled)).toContain("declare: { messageSchedules: true }");
      expect((await plain.connected.link.streamBounds(plain.stream)).last).toBe(0n);

      const { connected, stream, publisher } = await setUp(connect);
      const elsewhere = await refusal(
        publisher.publish({
          name: `${stream}.schedules.x`,
          payload: bytes("x"),
          options: { schedule: { at, target: `${uniqueName("other")}.due` } },
        }),
      );
      expect(isRustStreamError(elsewhere, "publish-refused"), String(elsewhere)).toBe(true);
      expect(String(elsewhere)).toContain("the target must be a subject the same stream stores");

      const invalid = [
        { at, target: `${stream}.schedules.x` },
        { everyMs: 500, target: `${stream}.due` },
        { at: new Date(Number.NaN), target: `${stream}.due` },
        { at, everyMs: 1000, target: `${stream}.due` },
        { at, target: `${stream}.*` },
      ];
      for (const schedule of invalid) {
        const error = await refusal(
          publisher.publish({
            name: `${stream}.schedules.x`,
            payload: bytes("x"),
            // Cast: the last two are what the types refuse, checked at run time too.
            options: { schedule: schedule as never },
          }),
        );
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String(error)).toContain("schedule: ");
      }
      const core = await refusal(
        (await new NatsPublish().pair(connected)).publish({
          name: `${stream}.schedules.x`,
          payload: bytes("x"),
          options: { schedule: { at, target: `${stream}.due` } },
        }),
      );
      expect(isRustStreamError(core, "unsupported"), String(core)).toBe(true);
      expect(String(core)).toContain("jetStream: true");
      expect((await connected.link.streamBounds(stream)).last).toBe(0n);
    });
  });
}
