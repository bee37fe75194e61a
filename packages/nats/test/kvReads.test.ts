import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { isRustStreamError } from "@ruststream/core";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type KvBucket, NatsBroker, NatsKv } from "../src/index.js";
import { eventually, rawClient } from "./env.live.js";
import { letPass, read, setUp, shown } from "./kvSupport.js";
import { openedPerTest, targets } from "./targets.js";

// A KV bucket's reads past a key's latest entry: one revision, a key's history, and a purge whose
// marker has its own TTL. On the real server and on the stand-in alike; then the official KV client
// beside ours, and which API a get asks (direct or the stream's leader).

const opened = openedPerTest();

async function historyOf(kv: KvBucket, key: string): Promise<string[]> {
  return (await kv.history(key)).map(shown);
}

for (const [where, connect] of targets) {
  describe(`KV reads, ${where}`, () => {
    it("get at a revision: that entry of the key, undefined once dropped, another key's refused", async () => {
      const { bucket, put, kv } = await setUp(opened, connect, 2);
      await put("a", "1");
      await put("b", "1");
      await put("a", "2");
      await put("a", "3");
      const at = async (revision: bigint | number) => {
        const entry = await kv.get("a", { revision });
        return entry === undefined ? "missing" : shown(entry);
      };
      expect([await at(3), await at(4n)]).toEqual(["a=2@3 put", "a=3@4 put"]);
      // The bucket keeps two entries a key: the first went; 99 was never written.
      expect([await at(1), await at(99)]).toEqual(["missing", "missing"]);
      await kv.delete("a");
      expect(await at(5)).toBe("a=@5 delete");
      const other = await kv.get("a", { revision: 2 }).catch((error: unknown) => error);
      expect(isRustStreamError(other, "invalid-argument"), String(other)).toBe(true);
      expect(String(other)).toContain(
        `revision 2 of the KV bucket "${bucket}" is not an entry of the key "a"`,
      );
      for (const bad of [0, -1, 1.5, 0n]) {
        const error = await kv.get("a", { revision: bad }).catch((e: unknown) => e);
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        expect(String(error)).toContain("a KV revision is a whole number from 1");
      }
    });

    it("history: the key's kept entries oldest first, markers too; a purge drops those before it", async () => {
      const { put, kv } = await setUp(opened, connect, 5);
      await put("a", "1");
      await put("b", "1");
      await put("a", "2");
      await kv.delete("a");
      await put("a", "3");
      expect(await historyOf(kv, "a")).toEqual([
        "a=1@1 put",
        "a=2@3 put",
        "a=@4 delete",
        "a=3@5 put",
      ]);
      expect(await historyOf(kv, "b")).toEqual(["b=1@2 put"]);
      expect(await historyOf(kv, "c")).toEqual([]);
      await kv.purge("a");
      expect(await historyOf(kv, "a")).toEqual(["a=@6 purge"]);
      // Past the history limit, only the kept entries.
      for (const value of ["1", "2", "3", "4", "5", "6"]) await put("d", value);
      expect(await historyOf(kv, "d")).toEqual([
        "d=2@8 put",
        "d=3@9 put",
        "d=4@10 put",
        "d=5@11 put",
        "d=6@12 put",
      ]);
      const filter = await kv.history("a.*").catch((error: unknown) => error);
      expect(isRustStreamError(filter, "invalid-argument"), String(filter)).toBe(true);
      expect(String(filter)).toContain("no wildcards");
    });

    it("a purge's marker with its own TTL: the marker goes after it, and the key with it", async () => {
      const { connected, put, kv } = await setUp(opened, connect, 1, { markerTtlMs: 5000 });
      await put("gone", "1");
      await put("kept", "1");
      expect((await kv.purge("gone", { ttlMs: 1000 })).sequence).toBe(3n);
      expect((await kv.purge("kept")).sequence).toBe(4n);
      expect([await read(kv, "gone"), await read(kv, "kept")]).toEqual([
        "gone=@3 purge",
        "kept=@4 purge",
      ]);
      letPass(connected, 1000);
      await eventually(
        async () => (await read(kv, "gone")) === "missing",
        10_000,
        "the purge's marker gone after its own TTL",
      );
      // The marker without a TTL stays; the one that went left no marker of its own.
      expect([await read(kv, "kept"), await historyOf(kv, "gone")]).toEqual(["kept=@4 purge", []]);
    }, 20_000);

    it("a purge's TTL where the bucket takes none is refused, saying how to allow it, storing nothing", async () => {
      const { put, kv } = await setUp(opened, connect);
      await put("k", "1");
      const refused = await kv.purge("k", { ttlMs: 5000 }).catch((error: unknown) => error);
      expect(isRustStreamError(refused, "unsupported"), String(refused)).toBe(true);
      expect(String(refused)).toContain("takes no per-message TTL: allow it (allow_msg_ttl");
      expect(String(refused)).toContain("markerTtlMs");
      const uneven = await kv.purge("k", { ttlMs: 1500 }).catch((error: unknown) => error);
      expect(isRustStreamError(uneven, "invalid-argument"), String(uneven)).toBe(true);
      expect(String(uneven)).toContain("whole seconds");
      expect(await historyOf(kv, "k")).toEqual(["k=1@1 put"]);
    });

    it("after shutdown, a read at a revision and a history reject closed", async () => {
      const { connected, put, kv } = await setUp(opened, connect);
      await put("a", "1");
      await connected.shutdown();
      for (const work of [kv.get("a", { revision: 1 }), kv.history("a")]) {
        const error = await work.catch((e: unknown) => e);
        expect(isRustStreamError(error, "closed"), String(error)).toBe(true);
      }
    });
  });
}

const live = () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();

describe("KV reads with the official KV client, on the real server", () => {
  it("we read the client's revisions and history, and it reads our purge with a TTL", async () => {
    const { put, kv } = await setUp(opened, live, 5, { markerTtlMs: 5000 });
    const nc = await rawClient();
    try {
      const theirs = await new Kvm(jetstream(nc)).open(kv.bucket);
      expect(await theirs.put("a", "1")).toBe(1);
      await put("a", "2");
      await theirs.delete("a");
      expect(await theirs.put("a", "3")).toBe(4);
      const their = [];
      for await (const e of await theirs.history({ key: "a" }))
        their.push(`${e.operation}@${e.revision}`);
      expect(their).toEqual(["PUT@1", "PUT@2", "DEL@3", "PUT@4"]);
      expect(await historyOf(kv, "a")).toEqual([
        "a=1@1 put",
        "a=2@2 put",
        "a=@3 delete",
        "a=3@4 put",
      ]);
      const at2 = await kv.get("a", { revision: 2 });
      expect(at2 === undefined ? "missing" : shown(at2)).toBe("a=2@2 put");
      expect((await theirs.get("a", { revision: 2 }))?.string()).toBe("2");
      // Our purge with its marker's TTL, as the client writes its own (Nats-TTL on the marker).
      expect((await kv.purge("a", { ttlMs: 60_000 })).sequence).toBe(5n);
      const marker = await theirs.get("a");
      expect([marker?.operation, marker?.revision]).toEqual(["PURGE", 5]);
      const jsm = await jetstreamManager(nc);
      const stored = await jsm.streams.getMessage(`KV_${kv.bucket}`, { seq: 5 });
      expect(stored?.header.get("Nats-TTL")).toBe("60");
    } finally {
      await nc.close();
    }
  });

  it("a get asks any replica (a direct get) where the bucket allows it, else the stream's leader", async () => {
    const nc = await rawClient();
    const connected = await live();
    opened.connections.push(connected);
    try {
      const js = jetstream(nc);
      const direct = uniqueName("kvdirect").replaceAll(".", "_");
      const leader = uniqueName("kvleader").replaceAll(".", "_");
      opened.streams.push(`KV_${direct}`, `KV_${leader}`);
      await new Kvm(js).create(direct, { storage: "memory" });
      await new Kvm(js).create(leader, { storage: "memory", allow_direct: false });
      const asked: string[] = [];
      const listen = (subject: string) =>
        nc.subscribe(subject, { callback: (_, m) => void asked.push(m.subject) });
      for (const bucket of [direct, leader]) {
        listen(`$JS.API.DIRECT.GET.KV_${bucket}`);
        listen(`$JS.API.DIRECT.GET.KV_${bucket}.>`);
        listen(`$JS.API.STREAM.MSG.GET.KV_${bucket}`);
      }
      await nc.flush();
      for (const bucket of [direct, leader]) {
        await new Kvm(js).open(bucket).then((b) => b.put("k", "v"));
        const kv = await new NatsKv(bucket).pair(connected);
        expect(await read(kv, "k")).toBe("k=v@1 put");
        expect((await kv.get("k", { revision: 1 }))?.operation).toBe("put");
        expect((await kv.history("k")).length).toBe(1);
        expect(await kv.keys()).toEqual(["k"]);
      }
      // What this connection asked reached the raw client before its flush's answer.
      await nc.flush();
      // The history and the keys one direct batch get each: the history's answer says no more
      // follow. Without direct gets, a get an entry and a key.
      expect(asked.filter((s) => s.includes(direct))).toEqual([
        `$JS.API.DIRECT.GET.KV_${direct}.$KV.${direct}.k`,
        `$JS.API.DIRECT.GET.KV_${direct}`,
        `$JS.API.DIRECT.GET.KV_${direct}`,
        `$JS.API.DIRECT.GET.KV_${direct}`,
      ]);
      expect(asked.filter((s) => s.includes(leader))).toEqual(
        Array(5).fill(`$JS.API.STREAM.MSG.GET.KV_${leader}`),
      );
    } finally {
      await nc.close();
    }
  });
});
