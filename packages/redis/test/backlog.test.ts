import { isRustStreamError } from "@ruststream/core";
import { reportsBacklog } from "@ruststream/core/broker";
import { describe, expect, it } from "vitest";
import { RedisList, RedisPubSub, RedisStream } from "../src/index.js";
import { groupBacklog } from "../src/stream/groupBacklog.js";
import { sameOnServerAndStandIn } from "./serverAndStandIn.js";

// A stream subscription's backlog is its group's, from one XINFO GROUPS: the entries no consumer of
// the group has been handed (its lag) are ready, those handed to any consumer and not acked (its
// pending list) leased, whichever replica holds them. A reliable list's is its length (ready) and
// its processing list's (leased). The stand-in must answer the same.

/** What a call answers, or the code and message it rejected with. */
const outcome = (work: Promise<unknown>) =>
  work.then(
    (value) => ({ value }),
    (e: unknown) => ({ code: isRustStreamError(e) ? e.code : "other", message: String(e) }),
  );

describe("a subscription's backlog", () => {
  it("ready is the group's lag, leased its pending entries (another consumer's too); the same on the stand-in", async () => {
    await sameOnServerAndStandIn("group-backlog", async (connected, key) => {
      const subscription = await connected.subscribe(
        new RedisStream(key, { group: "g", start: "beginning" }),
      );
      try {
        const before = reportsBacklog(subscription) ? await subscription.backlog() : "no backlog";
        for (let i = 0; i < 5; i++) await connected.link.call("XADD", [key, "*", "n", i]);
        const published = reportsBacklog(subscription) ? await subscription.backlog() : undefined;
        // Another replica takes two and holds them (not acked).
        await connected.link.call("XREADGROUP", [
          "GROUP",
          "g",
          "another-replica",
          "COUNT",
          2,
          "STREAMS",
          key,
          ">",
        ]);
        const taken = reportsBacklog(subscription) ? await subscription.backlog() : undefined;
        return { before, published, taken };
      } finally {
        await subscription.close();
      }
    }).then((log) => {
      expect(log).toEqual({
        before: { ready: 0, leased: 0, scheduled: 0 },
        published: { ready: 5, leased: 0, scheduled: 0 },
        taken: { ready: 3, leased: 2, scheduled: 0 },
      });
    });
  });

  it("a retry parked with nackAfter is scheduled, no longer leased; the same on the stand-in", async () => {
    const log = await sameOnServerAndStandIn("parked-backlog", async (connected, key) => {
      const subscription = await connected.subscribe(
        new RedisStream(key, { group: "g", start: "beginning" }),
      );
      const backlog = () => (reportsBacklog(subscription) ? subscription.backlog() : undefined);
      try {
        for (let i = 0; i < 2; i++) await connected.link.call("XADD", [key, "*", "n", i]);
        // Both taken in one read; the read started ahead finds nothing more to take.
        const [first, second] = await subscription.nextBatch(2);
        const held = await backlog();
        const parked = await first?.nackAfter(60_000);
        const afterPark = await backlog();
        await second?.ack();
        const afterAck = await backlog();
        return { held, parked, afterPark, afterAck };
      } finally {
        await subscription.close();
      }
    });
    expect(log).toEqual({
      held: { ready: 0, leased: 2, scheduled: 0 },
      parked: "ok",
      afterPark: { ready: 0, leased: 1, scheduled: 1 },
      afterAck: { ready: 0, leased: 0, scheduled: 1 },
    });
  });

  it("the delayed set's due members count as ready (waiting for the sweep), the later ones scheduled; the same on the stand-in", async () => {
    // No subscription sweeps this set (nor, on the stand-in, watches it): what it holds stays.
    const log = await sameOnServerAndStandIn("due-backlog", async (connected, key) => {
      const delayed = `${key}.delayed`;
      const now = connected.link.now();
      await connected.link.call("XGROUP", ["CREATE", key, "g", "0", "MKSTREAM"]);
      await connected.link.call("XADD", [key, "*", "n", 1]);
      await connected.link.call("ZADD", [delayed, now - 1000, "due-1", now - 10, "due-2"]);
      await connected.link.call("ZADD", [delayed, now + 60_000, "later"]);
      return {
        counts: await groupBacklog(connected.link, key, "g", delayed),
        wrongType: await outcome(groupBacklog(connected.link, key, "g", key)),
      };
    });
    expect(log).toEqual({
      counts: { ready: 3, leased: 0, scheduled: 1 },
      wrongType: {
        code: "broker-failure",
        message: expect.stringContaining(`(XINFO GROUPS, ZCOUNT of "`),
      },
    });
    expect(log.wrongType).toMatchObject({ message: expect.stringContaining("WRONGTYPE") });
  });

  it("a group or a stream the server does not have: rejected naming it, the same on the stand-in", async () => {
    const log = await sameOnServerAndStandIn("group-gone", async (connected, key) => {
      await connected.link.call("XADD", [key, "*", "n", 1]);
      return {
        group: await outcome(groupBacklog(connected.link, key, "nobody")),
        stream: await outcome(groupBacklog(connected.link, `${key}-none`, "g")),
      };
    });
    expect(log.group).toEqual({
      code: "invalid-argument",
      message: expect.stringContaining('it has no consumer group "nobody"'),
    });
    expect(log.stream).toEqual({
      code: "broker-failure",
      message: expect.stringContaining("(XINFO GROUPS): ERR no such key"),
    });
  });

  it("a list's: ready its values, leased its processing list's (any consumer's); the same on the stand-in", async () => {
    const log = await sameOnServerAndStandIn("list-backlog", async (connected, key) => {
      const list = await connected.subscribe(new RedisList(key, { count: 2 }));
      try {
        for (let i = 0; i < 5; i++) await connected.link.call("LPUSH", [key, `v${i}`]);
        const published = reportsBacklog(list) ? await list.backlog() : undefined;
        // The subscription takes one batch of two (moved into the processing list), unsettled.
        const taken = await list.nextBatch(2);
        const held = reportsBacklog(list) ? await list.backlog() : undefined;
        return { published, taken: taken.length, held };
      } finally {
        await list.close();
      }
    });
    expect(log).toEqual({
      published: { ready: 5, leased: 0 },
      taken: 2,
      held: { ready: 3, leased: 2 },
    });
  });

  it("a channel's subscription answers none: Pub/Sub keeps nothing", async () => {
    await sameOnServerAndStandIn("no-backlog", async (connected, key) => {
      const channel = await connected.subscribe(new RedisPubSub(key));
      try {
        expect(reportsBacklog(channel)).toBe(false);
      } finally {
        await channel.close();
      }
    });
  });
});
