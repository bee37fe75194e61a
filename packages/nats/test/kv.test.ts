import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { isRustStreamError } from "@ruststream/core";
import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  KvDelivery,
  type KvStart,
  KvWatch,
  kvSubject,
  NatsBroker,
  NatsKv,
} from "../src/index.js";
import { eventually, rawClient } from "./env.live.js";
import { bytesOf, letPass, read, setUp } from "./kvSupport.js";
import { openedPerTest, targets } from "./targets.js";

// KV buckets: a watch from each start, puts with and without an expected revision (compare and
// set), deletes and purges (ours, with and without a revision) as the handler sees them, a key's
// read, a put's own TTL, a key's history past its limit. On the real server and on the stand-in
// alike, with the same revisions.

const opened = openedPerTest();
const { connections } = opened;

/** Reads a watch until the entry of `until` arrived: what it delivered, as `key=value@revision op`. */
async function readUntil(
  connected: ConnectedNatsBroker,
  watch: KvWatch,
  until: string,
): Promise<string[]> {
  const subscription = await connected.subscribe(watch);
  const got: string[] = [];
  try {
    while (!got.at(-1)?.startsWith(`${until}=`)) {
      const d = (await subscription.next()).value;
      if (d === undefined) break;
      if (!(d instanceof KvDelivery)) throw new Error("a KV watch delivered something else");
      got.push(`${d.key}=${text(d.payload)}@${d.revision} ${d.operation}`);
      await d.ack();
    }
  } finally {
    await subscription.close();
  }
  return got;
}

for (const [where, connect] of targets) {
  describe(`KV buckets, ${where}`, () => {
    it("a watch's starts: each key's last entry, all history, from a revision, from now", async () => {
      const { connected, bucket, put } = await setUp(opened, connect, 5);
      expect([await put("a", "1"), await put("b", "1"), await put("a", "2")]).toEqual([1n, 2n, 3n]);
      const watch = (start: KvStart) => new KvWatch(bucket, { start });
      await put("end", "x");
      expect(await readUntil(connected, watch("last-per-key"), "end")).toEqual([
        "b=1@2 put",
        "a=2@3 put",
        "end=x@4 put",
      ]);
      expect(await readUntil(connected, watch("all"), "end")).toEqual([
        "a=1@1 put",
        "b=1@2 put",
        "a=2@3 put",
        "end=x@4 put",
      ]);
      expect(await readUntil(connected, watch({ revision: 3 }), "end")).toEqual([
        "a=2@3 put",
        "end=x@4 put",
      ]);
      const fromNow = await connected.subscribe(watch("new"));
      await put("c", "1");
      const d = (await fromNow.next()).value as KvDelivery;
      expect([d.bucket, d.key, d.name, d.revision, text(d.payload)]).toEqual([
        bucket,
        "c",
        "c",
        5n,
        "1",
      ]);
      expect(String(d.position)).toBe(`KV_${bucket}:5`);
      await d.ack();
      await fromNow.close();
    });

    it("a filter: only the keys it matches", async () => {
      const { connected, bucket, put } = await setUp(opened, connect);
      await put("users.1", "ann");
      await put("orders.1", "o");
      await put("users.2", "bob");
      expect(
        await readUntil(
          connected,
          new KvWatch(bucket, { keys: "users.*", start: "all" }),
          "users.2",
        ),
      ).toEqual(["users.1=ann@1 put", "users.2=bob@3 put"]);
    });

    it("a put expecting a revision: stored at it, refused in the bucket's words otherwise", async () => {
      const { bucket, put } = await setUp(opened, connect);
      expect(await put("k", "first", 0)).toBe(1n);
      const again = await put("k", "again", 0).catch((error: unknown) => error);
      expect(isRustStreamError(again, "publish-refused"), String(again)).toBe(true);
      expect(String(again)).toContain(
        `the key "k" of the KV bucket "${bucket}" is not at revision 0 (it is at 1)`,
      );
      const stale = await put("k", "stale", 5).catch((error: unknown) => error);
      expect(String(stale)).toContain("is not at revision 5 (it is at 1)");
      expect(await put("k", "second", 1)).toBe(2n);
    });

    it("deletes and purges: unseen by default, handed over with deletes, a purge dropping the key's history", async () => {
      const { connected, bucket, put, kv } = await setUp(opened, connect, 5);
      await put("a", "1");
      await put("a", "2");
      expect((await kv.delete("a")).sequence).toBe(3n);
      await put("b", "1");
      await put("end", "x");
      expect(await readUntil(connected, new KvWatch(bucket, { start: "all" }), "end")).toEqual([
        "a=1@1 put",
        "a=2@2 put",
        "b=1@4 put",
        "end=x@5 put",
      ]);
      const purged = await kv.purge("b");
      expect([purged.stream, purged.sequence, purged.position]).toEqual([
        `KV_${bucket}`,
        6n,
        `KV_${bucket}:6`,
      ]);
      await put("fin", "y");
      expect(
        await readUntil(connected, new KvWatch(bucket, { start: "all", deletes: true }), "fin"),
      ).toEqual([
        "a=1@1 put",
        "a=2@2 put",
        "a=@3 delete",
        "end=x@5 put",
        "b=@6 purge",
        "fin=y@7 put",
      ]);
    });

    it("get: a key's latest entry, a deleted or purged key its marker, a missing key undefined", async () => {
      const { put, kv } = await setUp(opened, connect, 5);
      expect(await read(kv, "a")).toBe("missing");
      await put("a", "1");
      await put("b", "1");
      await put("a", "2");
      expect(await read(kv, "a")).toBe("a=2@3 put");
      const entry = await kv.get("a");
      expect([entry?.bucket, entry?.created instanceof Date]).toEqual([kv.bucket, true]);
      // The value is the reader's: changing it changes nothing stored.
      if (entry?.operation === "put") bytesOf(entry.value).fill(0);
      expect(await read(kv, "a")).toBe("a=2@3 put");
      await kv.delete("a");
      expect(await read(kv, "a")).toBe("a=@4 delete");
      await kv.purge("b");
      expect(await read(kv, "b")).toBe("b=@5 purge");
      await put("a", "3");
      expect(await read(kv, "a")).toBe("a=3@6 put");
      expect(await read(kv, "c.d")).toBe("missing");
      const bad = await kv.get("a.*").catch((error: unknown) => error);
      expect(isRustStreamError(bad, "invalid-argument"), String(bad)).toBe(true);
      expect(String(bad)).toContain("no wildcards");
    });

    it("a delete or purge expecting a revision: stored at it, refused in the bucket's words otherwise", async () => {
      const { bucket, put, kv } = await setUp(opened, connect, 5);
      await put("k", "1");
      const stale = await kv.delete("k", { revision: 5 }).catch((error: unknown) => error);
      expect(isRustStreamError(stale, "publish-refused"), String(stale)).toBe(true);
      expect(String(stale)).toContain(
        `the key "k" of the KV bucket "${bucket}" is not at revision 5 (it is at 1): the compare-and-set delete stored nothing`,
      );
      expect(await read(kv, "k")).toBe("k=1@1 put");
      expect((await kv.delete("k", { revision: 1 })).sequence).toBe(2n);
      const late = await kv.purge("k", { revision: 1 }).catch((error: unknown) => error);
      expect(String(late)).toContain(
        "is not at revision 1 (it is at 2): the compare-and-set purge",
      );
      expect((await kv.purge("k", { revision: 2 })).sequence).toBe(3n);
      expect(await read(kv, "k")).toBe("k=@3 purge");
    });

    it("a put's own TTL: the entry goes, the server's marker reads as a purge, then goes too", async () => {
      const { connected, bucket, put, kv } = await setUp(opened, connect, 1, { markerTtlMs: 5000 });
      await put("keep", "1", undefined, "never");
      expect(await put("brief", "1", undefined, 1000)).toBe(2n);
      expect(await read(kv, "brief")).toBe("brief=1@2 put");
      letPass(connected, 1000);
      await eventually(
        async () => (await read(kv, "brief")) === "brief=@3 purge",
        10_000,
        "the expired entry's marker",
      );
      const marker = await connected.link.message(`KV_${bucket}`, {
        lastOn: kvSubject(bucket, "brief"),
      });
      expect(
        ["Nats-Marker-Reason", "Nats-TTL", "Nats-Rollup"].map((h) => marker?.headers.getString(h)),
      ).toEqual(["MaxAge", "5s", "sub"]);
      expect(
        await readUntil(connected, new KvWatch(bucket, { start: "all", deletes: true }), "brief"),
      ).toEqual(["keep=1@1 put", "brief=@3 purge"]);
      letPass(connected, 5000);
      await eventually(
        async () => (await read(kv, "brief")) === "missing",
        15_000,
        "the marker gone after its own TTL",
      );
      expect(await read(kv, "keep")).toBe("keep=1@1 put");
    }, 30_000);

    it("a put's TTL under markers: raised to the markers' where a key keeps more than one entry", async () => {
      const { connected, bucket, put } = await setUp(opened, connect, 5, { markerTtlMs: 60_000 });
      await put("short", "1", undefined, 1000);
      await put("long", "1", undefined, 120_000);
      const ttl = async (key: string) =>
        (
          await connected.link.message(`KV_${bucket}`, { lastOn: kvSubject(bucket, key) })
        )?.headers.getString("Nats-TTL");
      expect([await ttl("short"), await ttl("long")]).toEqual(["60", "120"]);
    });

    it("a put's TTL where the bucket takes none is refused, saying how to allow it", async () => {
      const { put, kv } = await setUp(opened, connect);
      const refused = await put("k", "1", undefined, 5000).catch((error: unknown) => error);
      expect(isRustStreamError(refused, "unsupported"), String(refused)).toBe(true);
      expect(String(refused)).toContain("takes no per-message TTL: allow it (allow_msg_ttl");
      expect(String(refused)).toContain("markerTtlMs");
      expect(await read(kv, "k")).toBe("missing");
      const uneven = await put("k", "1", undefined, 1500).catch((error: unknown) => error);
      expect(isRustStreamError(uneven, "invalid-argument"), String(uneven)).toBe(true);
      expect(String(uneven)).toContain("whole seconds");
    });

    it("after shutdown, a bucket's reads, deletes and purges, and its pairing, reject closed", async () => {
      const { connected, kv } = await setUp(opened, connect);
      await connected.shutdown();
      for (const work of [
        kv.get("a"),
        kv.delete("a"),
        kv.purge("a"),
        new NatsKv(kv.bucket).pair(connected),
      ]) {
        const error = await work.catch((e: unknown) => e);
        expect(isRustStreamError(error, "closed"), String(error)).toBe(true);
      }
    });

    it("a key keeps the bucket's history: the oldest entries go", async () => {
      const { connected, bucket, put } = await setUp(opened, connect, 2);
      for (const value of ["1", "2", "3"]) await put("a", value);
      await put("end", "x");
      expect(await readUntil(connected, new KvWatch(bucket, { start: "all" }), "end")).toEqual([
        "a=2@2 put",
        "a=3@3 put",
        "end=x@4 put",
      ]);
    });

    it("a failed entry is delivered again by the server", async () => {
      const { connected, bucket, put } = await setUp(opened, connect);
      await put("a", "1");
      const subscription = await connected.subscribe(new KvWatch(bucket, { start: "all" }));
      const first = (await subscription.next()).value as KvDelivery;
      expect(await first.nack({ requeue: true })).toBe("ok");
      const again = (await subscription.next()).value as KvDelivery;
      expect([again.key, again.revision, again.redeliveryCount]).toEqual(["a", 1n, 2]);
      await again.ack();
      await subscription.close();
    });

    it("a missing bucket is a clear error naming it and the option that declares it", async () => {
      const connected = await connect();
      connections.push(connected);
      const bucket = uniqueName("nokv").replaceAll(".", "_");
      for (const error of [
        await connected.subscribe(new KvWatch(bucket)).catch((e: unknown) => e),
        await new NatsKv(bucket).pair(connected).catch((e: unknown) => e),
      ]) {
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String(error)).toContain(`the KV bucket "${bucket}" does not exist`);
        expect(String(error)).toContain("declare");
      }
    });
  });
}

describe("KV names", () => {
  it("a bucket, a key or a filter the server would refuse is refused here, naming what is wrong", () => {
    const refusal = (work: () => unknown) => {
      try {
        work();
      } catch (error) {
        return error;
      }
      throw new Error("not refused");
    };
    for (const bad of ["a.b", "a b", "", "a*"]) {
      const error = refusal(() => new KvWatch(bad));
      expect(isRustStreamError(error, "invalid-argument"), bad).toBe(true);
      expect(String(error)).toContain("is not a KV bucket name");
    }
    for (const bad of ["a..b", ".a", "a.", "a b", "a.>.b", "a*"]) {
      expect(String(refusal(() => new KvWatch("b", { keys: bad })))).toContain(
        "is not a KV key or filter",
      );
    }
    expect(String(refusal(() => kvSubject("b", "a.*")))).toContain("no wildcards");
    for (const markerTtlMs of [500, 1500, 0]) {
      for (const work of [
        () => new KvWatch("b", { declare: { markerTtlMs } }),
        () => new NatsKv("b", { declare: { markerTtlMs } }),
      ]) {
        const error = refusal(work);
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String(error)).toContain("declare.markerTtlMs");
        expect(String(error)).toContain("whole seconds in milliseconds, 1000 or more");
      }
    }
    expect(String(refusal(() => new KvWatch("b", { start: { revision: 0 } })))).toContain(
      "KvWatch start",
    );
    expect(kvSubject("config", "users.42")).toBe("$KV.config.users.42");
    expect(new KvWatch("b", { keys: ["users.*", "orders.>"] }).subjects).toEqual([
      "$KV.b.users.*",
      "$KV.b.orders.>",
    ]);
  });
});

describe("KV buckets with the official KV client, on the real server", () => {
  it("the client reads our deletes and purges as its own, and we read its entries", async () => {
    const { put, kv } = await setUp(
      opened,
      () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect(),
      5,
    );
    const nc = await rawClient();
    try {
      const theirs = await new Kvm(jetstream(nc)).open(kv.bucket);
      await put("a", "1");
      await put("b", "1");
      await put("b", "2");
      expect((await kv.delete("a")).sequence).toBe(4n);
      expect((await kv.purge("b")).sequence).toBe(5n);
      const a = await theirs.get("a");
      const b = await theirs.get("b");
      expect([a?.operation, a?.revision, b?.operation, b?.revision]).toEqual([
        "DEL",
        4,
        "PURGE",
        5,
      ]);
      // The purge rolled the key's history up to its marker; the delete kept it.
      const history = async (key: string) => {
        const out: string[] = [];
        for await (const e of await theirs.history({ key }))
          out.push(`${e.operation}@${e.revision}`);
        return out;
      };
      expect(await history("b")).toEqual(["PURGE@5"]);
      expect(await history("a")).toEqual(["PUT@1", "DEL@4"]);
      // Its create() takes a deleted key as free; we read what it wrote.
      expect(await theirs.create("a", "again")).toBe(6);
      expect(await read(kv, "a")).toBe("a=again@6 put");
      await theirs.delete("a");
      expect(await read(kv, "a")).toBe("a=@7 delete");
    } finally {
      await nc.close();
    }
  });

  it("a watch sees the client's puts, deletes and purges; the client reads ours at our revision", async () => {
    const { connected, bucket, put } = await setUp(
      opened,
      () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect(),
      5,
    );
    const nc = await rawClient();
    try {
      const kv = await new Kvm(jetstream(nc)).open(bucket);
      expect(await kv.put("a", "1")).toBe(1);
      await kv.delete("a");
      expect(await kv.create("b", "1")).toBe(3);
      await kv.purge("b");
      const ours = await put("c", "ours", 0);
      const read = await kv.get("c");
      expect([read?.string(), read?.revision]).toEqual(["ours", Number(ours)]);
      expect(await kv.update("c", "theirs", Number(ours))).toBe(6);
      expect(
        await readUntil(connected, new KvWatch(bucket, { start: "all", deletes: true }), "c"),
      ).toEqual(["a=1@1 put", "a=@2 delete", "b=@4 purge", "c=ours@5 put"]);
    } finally {
      await nc.close();
    }
  });
});
