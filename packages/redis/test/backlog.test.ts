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
        before: { ready: 0, leased: 0 },
        published: { ready: 5, leased: 0 },
        taken: { ready: 3, leased: 2 },
      });
    });
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
