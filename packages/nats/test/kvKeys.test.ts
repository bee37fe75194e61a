import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { isRustStreamError } from "@ruststream/core";
import { requireEnv } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type KvBucket, NatsBroker } from "../src/index.js";
import { rawClient } from "./env.live.js";
import { read, setUp } from "./kvSupport.js";
import { openedPerTest, targets } from "./targets.js";

// A KV bucket's keys by a filter: listed, deleted and purged as the KV clients do it, and the
// markers of removed keys dropped (purgeDeletes). On the real server and on the stand-in alike;
// then the official KV client beside ours.

const opened = openedPerTest();

/** A key's kept entries as `revision op`. */
async function kept(kv: KvBucket, key: string): Promise<string[]> {
  return (await kv.history(key)).map((e) => `${e.revision} ${e.operation}`);
}

for (const [where, connect] of targets) {
  describe(`KV keys, ${where}`, () => {
    it("keys past the 1,024 the server answers one direct batch get with: read a key at a time, the same list", async () => {
      const { kv } = await setUp(opened, connect);
      // One at a time, so the revisions follow the names.
      const written = Array.from({ length: 1030 }, (_, i) => `k.${i}`);
      for (const key of written) await kv.put(key, 1);
      await kv.delete("k.5");
      const all = await kv.keys();
      expect(all.length).toBe(1029);
      expect(all).toEqual(written.filter((key) => key !== "k.5"));
      // Under the bound, the batch: the same keys.
      expect(await kv.keys("k.1")).toEqual(["k.1"]);
      // The bucket keeps one entry a key: the marker alone goes.
      expect(await kv.purgeDeletes({ olderThanMs: 0 })).toBe(1);
      expect((await kv.keys()).length).toBe(1029);
    }, 60_000);

    it("keys: those a filter matches that hold a value, in the order of their latest revisions", async () => {
      const { put, kv } = await setUp(opened, connect, 5);
      expect(await kv.keys()).toEqual([]);
      await put("a.x", "1");
      await put("a.y", "1");
      await put("b", "1");
      await put("c", "1");
      await put("a.x", "2");
      await kv.delete("c");
      await put("d", "1");
      await kv.purge("d");
      expect(await kv.keys()).toEqual(["a.y", "b", "a.x"]);
      expect(await kv.keys("a.*")).toEqual(["a.y", "a.x"]);
      expect(await kv.keys("a.>")).toEqual(["a.y", "a.x"]);
      expect(await kv.keys("b")).toEqual(["b"]);
      expect(await kv.keys("c")).toEqual([]);
      expect(await kv.keys("z.*")).toEqual([]);
      const bad = await kv.keys("a.>.x").catch((error: unknown) => error);
      expect(isRustStreamError(bad, "invalid-argument"), String(bad)).toBe(true);
      expect(String(bad)).toContain('">" only the last');
    });

    it("deleteMatching and purgeMatching: one marker for each key the filter matches that holds a value", async () => {
      const { put, kv } = await setUp(opened, connect, 5);
      await put("a.x", "1");
      await put("a.y", "1");
      await put("b", "1");
      await kv.delete("a.y");
      await put("a.y", "2");
      await put("a.z", "1");
      await kv.delete("a.z");
      const deleted = await kv.deleteMatching("a.*");
      expect(deleted.map((r) => r.sequence)).toEqual([8n, 9n]);
      expect([await read(kv, "a.x"), await read(kv, "a.y"), await read(kv, "a.z")]).toEqual([
        "a.x=@8 delete",
        "a.y=@9 delete",
        "a.z=@7 delete",
      ]);
      expect(await kv.deleteMatching("none.*")).toEqual([]);
      expect(await kv.keys()).toEqual(["b"]);
      const purged = await kv.purgeMatching(">");
      expect(purged.map((r) => r.sequence)).toEqual([10n]);
      expect(await kv.keys()).toEqual([]);
      expect(await kv.history("b")).toHaveLength(1);
      expect(await read(kv, "b")).toBe("b=@10 purge");
      for (const work of [kv.deleteMatching("a.>.x"), kv.purgeMatching("")]) {
        const error = await work.catch((e: unknown) => e);
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
      }
    });

    it("purgeDeletes: the entries before a recent marker go, an old marker with them; a key holding a value is left", async () => {
      const { put, kv } = await setUp(opened, connect, 5);
      await put("k1", "1");
      await put("k1", "2");
      await kv.delete("k1");
      await put("k2", "1");
      await kv.purge("k2");
      await put("k3", "1");
      await kv.delete("k3");
      await put("k3", "2");
      // Every marker is younger than the default 30 minutes: only k1's two puts go.
      expect(await kv.purgeDeletes()).toBe(2);
      expect([await kept(kv, "k1"), await kept(kv, "k2"), await kept(kv, "k3")]).toEqual([
        ["3 delete"],
        ["5 purge"],
        ["6 put", "7 delete", "8 put"],
      ]);
      // 0: every marker goes, and the key with it.
      expect(await kv.purgeDeletes({ olderThanMs: 0 })).toBe(2);
      expect([await read(kv, "k1"), await read(kv, "k2"), await read(kv, "k3")]).toEqual([
        "missing",
        "missing",
        "k3=2@8 put",
      ]);
      expect(await kv.purgeDeletes({ olderThanMs: 0 })).toBe(0);
      for (const olderThanMs of [-1, 1.5]) {
        const error = await kv.purgeDeletes({ olderThanMs }).catch((e: unknown) => e);
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String(error)).toContain("olderThanMs is a whole number of milliseconds");
      }
    });
  });
}

describe("KV keys with the official KV client, on the real server", () => {
  it("we list and purge what its filter delete left; it lists what ours left, and reads our markers", async () => {
    const { kv } = await setUp(
      opened,
      () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect(),
      5,
    );
    const nc = await rawClient();
    try {
      const theirs = await new Kvm(jetstream(nc)).open(kv.bucket);
      await theirs.put("x.1", "1");
      await theirs.put("x.2", "1");
      await theirs.put("y", "1");
      await theirs.put("z", "1");
      await theirs.delete("x.*");
      expect(await kv.keys()).toEqual(["y", "z"]);
      await kv.deleteMatching("y");
      const listed = async () => {
        const keys: string[] = [];
        for await (const k of await theirs.keys()) keys.push(k);
        return keys.sort();
      };
      expect(await listed()).toEqual(["z"]);
      expect((await theirs.get("y"))?.operation).toBe("DEL");
      // Our purgeDeletes drops every marker, theirs and ours: the client no longer sees the keys.
      expect(await kv.purgeDeletes({ olderThanMs: 0 })).toBe(6);
      expect(await theirs.get("x.1")).toBeNull();
      expect(await listed()).toEqual(["z"]);
      expect((await theirs.get("z"))?.string()).toBe("1");
    } finally {
      await nc.close();
    }
  });
});
