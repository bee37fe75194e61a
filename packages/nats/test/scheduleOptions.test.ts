import { HeaderMap, isRustStreamError } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import type { NatsReceipt } from "../src/index.js";
import { eventually } from "./env.live.js";
import { refusal, scheduleStreams } from "./scheduleSupport.js";
import { targets } from "./targets.js";

// A schedule's options for its deliveries: a TTL on each (`ttlMs`, Nats-Schedule-TTL), the last
// message of another subject delivered in place of the schedule's own (`source`,
// Nats-Schedule-Source), each delivery a rollup of its target (`rollup`, Nats-Schedule-Rollup).
// On the real server and on the stand-in alike; the stand-in's ManualClock is moved by the test.

const setUp = scheduleStreams();

for (const [where, connect] of targets) {
  describe(`message schedule options, ${where}`, () => {
    it("ttlMs: the delivery carries the TTL and is gone from the stream once it runs out", async () => {
      const { connected, stream, target, publisher, last, advance, manual } = await setUp(connect, {
        messageTtl: true,
      });
      const schedule = `${stream}.schedules.expiring`;
      const receipt = (await publisher.publish({
        name: schedule,
        payload: bytes("short-lived"),
        options: { schedule: { at: new Date(Date.now() + 1000), target, ttlMs: 2000 } },
      })) as NatsReceipt;
      expect((await last(schedule))?.headers.getString("Nats-Schedule-TTL")).toBe("2");
      advance(1000);
      await eventually(async () => (await last(target)) !== undefined, 10_000, "the delivery");
      const delivered = await last(target);
      expect([
        text(delivered?.payload ?? bytes("")),
        delivered?.sequence,
        delivered?.headers.getString("Nats-TTL"),
        delivered?.headers.has("Nats-Schedule-TTL"),
      ]).toEqual(["short-lived", receipt.sequence + 1n, "2", false]);
      if (manual) {
        // Not before its TTL: a second in, it is still there.
        advance(1000);
        expect((await last(target))?.sequence).toBe(receipt.sequence + 1n);
        advance(1000);
      }
      await eventually(async () => (await last(target)) === undefined, 10_000, "the expiry");
      // Nothing left: the one-time schedule went with its delivery, the delivery with its TTL.
      expect(await connected.link.message(stream, { sequence: receipt.sequence + 1n })).toBe(
        undefined,
      );
      expect(await last(schedule)).toBeUndefined();
    });

    it("source: the source subject's last message is delivered (payload and headers); with none there, the schedule's own", async () => {
      const { stream, target, publisher, last, advance } = await setUp(connect);
      const source = `${stream}.price`;
      for (const price of ["10", "11"]) {
        await publisher.publish({
          name: source,
          payload: bytes(`price ${price}`),
          headers: new HeaderMap([["price", price]]),
        });
      }
      const schedule = `${stream}.schedules.price`;
      const fallbackTarget = `${stream}.fallback`;
      const at = new Date(Date.now() + 1000);
      await publisher.publish({
        name: schedule,
        payload: bytes("the schedule's own"),
        options: { schedule: { at, target, source } },
      });
      await publisher.publish({
        name: `${stream}.schedules.fallback`,
        payload: bytes("the schedule's own"),
        headers: new HeaderMap([["price", "none"]]),
        options: { schedule: { at, target: fallbackTarget, source: `${stream}.nothing` } },
      });
      advance(1000);
      await eventually(
        async () =>
          (await last(target)) !== undefined && (await last(fallbackTarget)) !== undefined,
        10_000,
        "both deliveries",
      );
      const delivered = await last(target);
      expect([
        text(delivered?.payload ?? bytes("")),
        delivered?.headers.getString("price"),
        delivered?.headers.getString("Nats-Scheduler"),
      ]).toEqual(["price 11", "11", schedule]);
      const fallback = await last(fallbackTarget);
      expect([text(fallback?.payload ?? bytes("")), fallback?.headers.getString("price")]).toEqual([
        "the schedule's own",
        "none",
      ]);
      // The source keeps its message: it is read, not moved.
      expect(text((await last(source))?.payload ?? bytes(""))).toBe("price 11");
    });

    it("rollup: each delivery replaces what its target holds, the target keeps the latest alone", async () => {
      const { connected, stream, target, publisher, last, advance } = await setUp(connect);
      await publisher.publish({ name: target, payload: bytes("before") });
      const now = Date.now();
      await publisher.publish({
        name: `${stream}.schedules.first`,
        payload: bytes("first"),
        options: { schedule: { at: new Date(now + 1000), target, rollup: true } },
      });
      const second = (await publisher.publish({
        name: `${stream}.schedules.second`,
        payload: bytes("second"),
        options: { schedule: { at: new Date(now + 1500), target, rollup: true } },
      })) as NatsReceipt;
      advance(1000);
      await eventually(
        async () => text((await last(target))?.payload ?? bytes("")) === "first",
        10_000,
        "the first delivery",
      );
      // The first delivery rolled up the message before it.
      expect((await connected.link.streamBounds(stream)).first).toBe(second.sequence);
      advance(500);
      await eventually(
        async () => text((await last(target))?.payload ?? bytes("")) === "second",
        10_000,
        "the second delivery",
      );
      const delivered = await last(target);
      expect([delivered?.sequence, delivered?.headers.getString("Nats-Rollup")]).toEqual([
        second.sequence + 2n,
        "sub",
      ]);
      // The stream holds the second delivery alone: the message before, the first delivery and
      // both one-time schedules are gone.
      expect(await connected.link.streamBounds(stream)).toEqual({
        first: second.sequence + 2n,
        last: second.sequence + 2n,
      });
    });

    it("refused: ttlMs by a stream that takes no TTL (naming the option), a source it does not store, and bad input before sending", async () => {
      const at = new Date(Date.now() + 60_000);
      const noTtl = await setUp(connect);
      const ttlRefused = await refusal(
        noTtl.publisher.publish({
          name: `${noTtl.stream}.schedules.x`,
          payload: bytes("x"),
          options: { schedule: { at, target: noTtl.target, ttlMs: 5000 } },
        }),
      );
      expect(isRustStreamError(ttlRefused, "unsupported"), String(ttlRefused)).toBe(true);
      expect(String(ttlRefused)).toContain("takes no per-message TTL");
      expect(String(ttlRefused)).toContain("declare: { messageTtl: true }");
      const elsewhere = await refusal(
        noTtl.publisher.publish({
          name: `${noTtl.stream}.schedules.x`,
          payload: bytes("x"),
          options: { schedule: { at, target: noTtl.target, source: `${uniqueName("other")}.x` } },
        }),
      );
      expect(isRustStreamError(elsewhere, "publish-refused"), String(elsewhere)).toBe(true);
      expect(String(elsewhere)).toContain("the source must be a subject the same stream stores");

      const { stream, target } = noTtl;
      const scheduleSubject = `${stream}.schedules.x`;
      const invalid: [unknown, string][] = [
        [{ at, target, ttlMs: 500 }, "give whole seconds in milliseconds"],
        [{ at, target, ttlMs: 1500 }, "give whole seconds in milliseconds"],
        [{ at, target, source: target }, "is the schedule's target"],
        [{ at, target, source: scheduleSubject }, "is the schedule's own subject"],
        [{ at, target, source: `${stream}.*` }, "without spaces or wildcards"],
        [{ at, target, rollup: "all" }, "rollup"],
      ];
      for (const [schedule, fix] of invalid) {
        const error = await refusal(
          noTtl.publisher.publish({
            name: scheduleSubject,
            payload: bytes("x"),
            // Cast: the last one is what the types refuse, checked at run time too.
            options: { schedule: schedule as never },
          }),
        );
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String(error)).toContain(fix);
      }
      expect((await noTtl.connected.link.streamBounds(stream)).last).toBe(0n);
    });
  });
}
