import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  NatsBroker,
  NatsObjectPut,
  ObjectDelivery,
  ObjectWatch,
  type ObjectWatchOptions,
} from "../src/index.js";
import { rawClient } from "./env.live.js";
import { openedPerTest, targets } from "./targets.js";

// Object stores: a watch from each start, each object's info as the handler's message, its
// content read when asked and bounded, a replaced version gone, deleted objects, puts. On the
// real server and on the stand-in alike.

const { connections, streams } = openedPerTest();

/** A connection, a store of its own (declared by the put policy), a put. */
async function setUp(connect: () => Promise<ConnectedNatsBroker>) {
  const connected = await connect();
  connections.push(connected);
  const bucket = uniqueName("obj").replaceAll(".", "_");
  streams.push(`OBJ_${bucket}`);
  const publisher = await new NatsObjectPut(bucket, { declare: { storage: "memory" } }).pair(
    connected,
  );
  const put = (name: string, content: Uint8Array) => publisher.publish({ name, payload: content });
  return { connected, bucket, publisher, put };
}

/** Reads a watch until the entry of `until`: each as `name:size` (`name:deleted` for a delete). */
async function readUntil(
  connected: ConnectedNatsBroker,
  watch: ObjectWatch,
  until: string,
  each?: (d: ObjectDelivery) => Promise<void>,
): Promise<string[]> {
  const subscription = await connected.subscribe(watch);
  const got: string[] = [];
  try {
    while (!got.at(-1)?.startsWith(`${until}:`)) {
      const d = (await subscription.next()).value;
      if (!(d instanceof ObjectDelivery))
        throw new Error("an object watch delivered something else");
      got.push(`${d.name}:${d.info.deleted === true ? "deleted" : d.info.size}`);
      await each?.(d);
      await d.ack();
    }
  } finally {
    await subscription.close();
  }
  return got;
}

const big = new Uint8Array(300 * 1024).map((_, i) => i % 251);

for (const [where, connect] of targets) {
  describe(`object stores, ${where}`, () => {
    it("a watch hands each object's info; its content is read when asked, whole and checked", async () => {
      const { connected, bucket, put } = await setUp(connect);
      const receipt = await put("big.bin", big);
      expect([receipt.info.size, receipt.info.chunks, receipt.revision]).toEqual([
        big.length,
        3,
        4n,
      ]);
      await put("small.txt", bytes("hello"));
      await put("empty", new Uint8Array(0));
      const contents = new Map<string, Uint8Array>();
      const watch = (start: NonNullable<ObjectWatchOptions["start"]>) =>
        new ObjectWatch(bucket, { start });
      expect(
        await readUntil(connected, watch("all"), "empty", async (d) => {
          contents.set(d.name, await d.read());
          // The handler's message is the info, as the clients write it.
          expect(JSON.parse(text(d.payload)).nuid).toBe(d.info.nuid);
        }),
      ).toEqual([`big.bin:${big.length}`, "small.txt:5", "empty:0"]);
      // Compared as bytes at once: the matcher's element-by-element walk takes seconds on 300 KiB.
      expect(Buffer.from(contents.get("big.bin") ?? []).equals(big)).toBe(true);
      expect(text(contents.get("small.txt") as Uint8Array)).toBe("hello");
      expect(contents.get("empty")?.length).toBe(0);
    });

    it("a replaced object: the watch from each object's last hands the new one; the old version is gone", async () => {
      const { connected, bucket, put } = await setUp(connect);
      const first = await put("a", bytes("first"));
      await put("a", bytes("second, longer"));
      await put("end", bytes("x"));
      const read: string[] = [];
      expect(
        await readUntil(connected, new ObjectWatch(bucket), "end", async (d) => {
          read.push(text(await d.read()));
        }),
      ).toEqual(["a:14", "end:1"]);
      expect(read).toEqual(["second, longer", "x"]);
      // The first version's info rolled up by the second's, its chunks purged: a read of it (as a
      // watch that saw it before the replacement would make) finds it gone.
      const subscription = await connected.subscribe(new ObjectWatch(bucket, { start: "all" }));
      const kept = (await subscription.next()).value as ObjectDelivery;
      expect([kept.name, kept.info.size]).toEqual(["a", 14]);
      await kept.ack();
      await subscription.close();
      const gone = await connected.link.readObject(first.info, 1024).catch((e: unknown) => e);
      expect(isRustStreamError(gone, "broker-failure"), String(gone)).toBe(true);
      expect(String(gone)).toContain("replaced or deleted since this entry");
    });

    it("an object over the watch's maxBytes is refused before it is read", async () => {
      const { connected, bucket, put } = await setUp(connect);
      await put("big.bin", big);
      const subscription = await connected.subscribe(new ObjectWatch(bucket, { maxBytes: 1024 }));
      const d = (await subscription.next()).value as ObjectDelivery;
      const error = await d.read().catch((e: unknown) => e);
      expect(isRustStreamError(error, "unsupported"), String(error)).toBe(true);
      expect(String(error)).toContain(`is ${big.length} bytes, over the 1024 this read takes`);
      await d.ack();
      await subscription.close();
    });

    it("deleted objects: our delete's receipt, unseen by default, handed over with deletes, the chunks gone", async () => {
      const { connected, bucket, put, publisher } = await setUp(connect);
      const { info } = await put("gone", bytes("soon"));
      const held = await connected.subscribe(new ObjectWatch(bucket, { start: "all" }));
      const before = (await held.next()).value as ObjectDelivery;
      const receipt = await publisher.delete("gone");
      expect(receipt).toMatchObject({
        name: "gone",
        revision: 3n,
        position: `OBJ_${bucket}:3`,
        info: { name: "gone", nuid: info.nuid, deleted: true, size: 0, chunks: 0, digest: "" },
      });
      // The version a delivery named before the delete has no chunks left to read.
      const stale = await before.read().catch((e: unknown) => e);
      expect(isRustStreamError(stale, "broker-failure"), String(stale)).toBe(true);
      expect(String(stale)).toContain("not whole");
      await before.ack();
      await held.close();
      // Nothing left to delete: deleted already, or never put.
      expect(await publisher.delete("gone")).toBeUndefined();
      expect(await publisher.delete("never")).toBeUndefined();
      await put("end", bytes("x"));
      expect(await readUntil(connected, new ObjectWatch(bucket, { start: "all" }), "end")).toEqual([
        "end:1",
      ]);
      expect(
        await readUntil(connected, new ObjectWatch(bucket, { start: "all", deletes: true }), "end"),
      ).toEqual(["gone:deleted", "end:1"]);
    });

    it("after shutdown, a put and a delete reject closed", async () => {
      const { connected, put, publisher } = await setUp(connect);
      await put("x", bytes("1"));
      await connected.shutdown();
      for (const work of [put("y", bytes("2")), publisher.delete("x")]) {
        const error = await work.catch((e: unknown) => e);
        expect(isRustStreamError(error, "closed"), String(error)).toBe(true);
      }
    });

    it("a watch from now sees only what is put after it opened", async () => {
      const { connected, bucket, put } = await setUp(connect);
      await put("before", bytes("1"));
      const subscription = await connected.subscribe(new ObjectWatch(bucket, { start: "new" }));
      await put("after", bytes("2"));
      const d = (await subscription.next()).value as ObjectDelivery;
      expect([d.name, text(await d.read())]).toEqual(["after", "2"]);
      await d.ack();
      await subscription.close();
    });

    it("a missing store is a clear error naming it and the option that declares it; a put carries no headers", async () => {
      const { connected, publisher } = await setUp(connect);
      const bucket = uniqueName("noobj").replaceAll(".", "_");
      const error = await connected.subscribe(new ObjectWatch(bucket)).catch((e: unknown) => e);
      expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
      expect(String(error)).toContain(`the object store "${bucket}" does not exist`);
      const withKey = await publisher
        .publish({ name: "x", payload: bytes("1"), partitionKey: "k" })
        .catch((e: unknown) => e);
      expect(isRustStreamError(withKey, "unsupported"), String(withKey)).toBe(true);
    });
  });
}

describe("object stores with the official object store client, on the real server", () => {
  it("our watch reads the client's objects and deletes; the client reads ours, deletes too", async () => {
    const { connected, bucket, put, publisher } = await setUp(() =>
      new NatsBroker({ servers: requireEnv("NATS_URL") }).connect(),
    );
    const nc = await rawClient();
    try {
      const store = await new Objm(jetstream(nc)).open(bucket);
      await store.putBlob({ name: "theirs.bin" }, big);
      await store.putBlob({ name: "doomed" }, bytes("x"));
      await store.delete("doomed");
      await put("ours.txt", bytes("from RustStream"));
      expect(text((await store.getBlob("ours.txt")) as Uint8Array)).toBe("from RustStream");
      // Our delete of one of its objects, and of one of ours, read by it as its own.
      await store.putBlob({ name: "theirs.gone" }, big);
      await put("ours.gone", bytes("brief"));
      expect((await publisher.delete("theirs.gone"))?.info.deleted).toBe(true);
      expect((await publisher.delete("ours.gone"))?.info.deleted).toBe(true);
      for (const name of ["theirs.gone", "ours.gone"]) {
        const info = await store.info(name);
        expect([name, info?.deleted, info?.size, await store.getBlob(name)]).toEqual([
          name,
          true,
          0,
          null,
        ]);
      }
      const read = new Map<string, Uint8Array>();
      expect(
        await readUntil(
          connected,
          new ObjectWatch(bucket, { start: "all", deletes: true }),
          "ours.txt",
          async (d) => {
            if (d.info.deleted !== true) read.set(d.name, await d.read());
          },
        ),
      ).toEqual([`theirs.bin:${big.length}`, "doomed:deleted", "ours.txt:15"]);
      expect(Buffer.from(read.get("theirs.bin") ?? []).equals(big)).toBe(true);
    } finally {
      await nc.close();
    }
  });
});
