import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { assertOneSlot, derivedKey, hasHashTag, hashSlot, keyOf } from "../src/client/slots.js";
import { RedisList, RedisStream } from "../src/index.js";

// The broker's own hash-slot arithmetic, held to values the cluster computes (CLUSTER KEYSLOT on
// Redis 7.0.15; the cluster tests check more against the live cluster).

describe("hash slots", () => {
  it("agrees with the server's CLUSTER KEYSLOT", () => {
    expect(hashSlot("foo")).toBe(12182);
    expect(hashSlot("123456789")).toBe(12739);
    expect(hashSlot("")).toBe(0);
    expect(hashSlot("ünïcode")).toBe(6051); // the UTF-8 bytes are hashed
    expect(hashSlot("a{b")).toBe(13340); // no closing brace: the whole key
    expect(hashSlot("foo{}{bar}")).toBe(8363); // an empty first tag: the whole key
    expect(hashSlot("foo{{bar}}zap")).toBe(4015); // the tag is "{bar"
    expect(hashSlot("orders")).toBe(hashSlot("{orders}.delayed"));
  });

  it("hashes the tag, the text between the first { and the next }, when it is not empty", () => {
    expect(hashSlot("{user1000}.following")).toBe(hashSlot("user1000"));
    expect(hashSlot("foo{}{bar}")).not.toBe(hashSlot("bar"));
    expect(hashSlot("foo{{bar}}zap")).toBe(hashSlot("{bar"));
    expect(hashSlot("foo{bar}{zap}")).toBe(hashSlot("bar"));
    expect(hashTagged(["{a}", "a{b}c", "x{}y{z}"])).toEqual([true, true, false]);
  });

  it("names derived keys into their key's slot on a cluster, and as always on one server", () => {
    expect(derivedKey("jobs", ".processing", false)).toBe("jobs.processing");
    expect(derivedKey("jobs", ".processing", true)).toBe("{jobs}.processing");
    expect(derivedKey("{tenant}.jobs", ".processing", true)).toBe("{tenant}.jobs.processing");
    for (const key of ["jobs", "{tenant}.jobs", "a{b", "ünïcode"]) {
      expect(hashSlot(derivedKey(key, ".recovery", true)), key).toBe(hashSlot(key));
    }
    // A `}` with no tag cannot be braced into its own slot: the plain name, refused at subscribe.
    expect(derivedKey("a}b", ".processing", true)).toBe("a}b.processing");
  });

  it("descriptors name their keys for the deployment", () => {
    expect(new RedisList("jobs").keys(true)).toEqual({
      queue: "jobs",
      processing: "{jobs}.processing",
      recovery: "{jobs}.recovery",
    });
    expect(new RedisList("jobs").keys(false)).toEqual({
      queue: "jobs",
      processing: "jobs.processing",
      recovery: "jobs.recovery",
    });
    expect(new RedisList("jobs", { processing: "mine" }).keys(true).processing).toBe("mine");
    expect(new RedisStream("orders").keys(true)).toEqual({
      stream: "orders",
      delayed: "{orders}.delayed",
    });
    expect(new RedisStream("orders").keys(false).delayed).toBe("orders.delayed");
    expect(new RedisStream("orders", { delayedRetry: false }).keys(true).delayed).toBeUndefined();
  });

  it("refuses a transaction across slots, naming the keys, their slots and the fix", () => {
    const xadd = (key: string) => ({ name: "XADD", args: [key, "*", "_payload", "x"] });
    expect(() => assertOneSlot([xadd("{a}.x"), xadd("{a}.y")])).not.toThrow();
    // A classic publish names no key: it does not pin the transaction to a slot.
    expect(() =>
      assertOneSlot([xadd("a"), { name: "PUBLISH", args: ["elsewhere", "m"] }]),
    ).not.toThrow();
    let error: unknown;
    try {
      assertOneSlot([xadd("a"), xadd("b")]);
    } catch (e) {
      error = e;
    }
    expect(isRustStreamError(error, "unsupported")).toBe(true);
    expect((error as Error).message).toMatch(/"a" \(slot 15495\), "b" \(slot 3300\).*one hash tag/);
    expect(keyOf({ name: "SPUBLISH", args: ["news", "m"] })).toBe("news");
    // XINFO names its subcommand first, then the key: a backlog's MULTI is placed by the stream.
    expect(keyOf({ name: "XINFO", args: ["GROUPS", "orders"] })).toBe("orders");
    expect(() =>
      assertOneSlot([
        { name: "XINFO", args: ["GROUPS", "orders"] },
        { name: "ZCOUNT", args: ["{orders}.delayed", "-inf", 1] },
      ]),
    ).not.toThrow();
  });
});

function hashTagged(keys: string[]): boolean[] {
  return keys.map(hasHashTag);
}
