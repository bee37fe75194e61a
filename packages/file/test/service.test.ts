import { readFileSync } from "node:fs";
import { join } from "node:path";
import { drop, RustStream, retry } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { describe, expect, it, vi } from "vitest";
import { decodeFile } from "../src/formatEntry.js";
import {
  FileBroker,
  FileStream,
  PRIME_STREAM_KEY,
  SEQUENCE_HEADER,
  sidecarPath,
} from "../src/index.js";
import { tempDir, text, utf8 } from "./tempDir.js";

const dir = tempDir("ruststream-file-service-");

/**
 * The shape of the README's service (examples/file): orders in, receipts out, a named consumer
 * that resumes after a restart.
 */
function ordersApp(path: string, seen: number[]) {
  const app = new RustStream({ name: "orders", version: "1.0.0" });
  app.broker(new FileBroker({ path, consumer: "billing" }), (b) => {
    b.subscriber("orders")
      .reply("receipts")
      .handle(async (order) => {
        const { id } = order as { id: number };
        seen.push(id);
        return { orderId: id, accepted: true };
      });
  });
  return app;
}

describe("a service on FileBroker", () => {
  it("runs in process under TestApp, writing nothing to its real file", async () => {
    const path = join(dir, "never-written.ss");
    const seen: number[] = [];
    const t = await TestApp.start(ordersApp(path, seen));
    await t.publish("orders", { id: 1 });
    expect(seen).toEqual([1]);
    expect(t.published("receipts").map((m) => m.value)).toEqual([{ orderId: 1, accepted: true }]);
    await t.stop();
    expect(() => readFileSync(path)).toThrow();
  });

  it("resumes after the last settled message when restarted, live on a real file", async () => {
    const path = join(dir, "orders.ss");
    const seen: number[] = [];
    const first = await TestApp.startLive(ordersApp(path, seen));
    await first.publish("orders", { id: 1 });
    await first.publish("orders", { id: 2 });
    // A live reaction counts as over after a quiet spell, which a loaded machine can fake: wait for
    // the replies themselves, then for quiet, and only then count.
    await vi.waitFor(() => expect(first.published("receipts")).toHaveLength(2), {
      timeout: 10_000,
    });
    await first.settle();
    expect(first.published("receipts")).toHaveLength(2);
    await first.stop();
    expect(JSON.parse(readFileSync(sidecarPath(path, "billing", "orders"), "utf8"))).toMatchObject({
      next: "3",
    });

    const second = await TestApp.startLive(ordersApp(path, seen));
    await second.publish("orders", { id: 3 });
    await vi.waitFor(() => expect(second.published("receipts")).toHaveLength(1), {
      timeout: 10_000,
    });
    await second.settle();
    await second.stop();
    // 1 and 2 are not replayed: the restart picked up after them.
    expect(seen).toEqual([1, 2, 3]);
    const messages = decodeFile(new Uint8Array(readFileSync(path))).messages;
    expect(messages[0]).toMatchObject({ streamKey: PRIME_STREAM_KEY });
    expect(messages.filter((m) => m.streamKey === "receipts")).toHaveLength(3);
  }, 30_000);
});

describe("FileBroker conventions", () => {
  it("a named consumer's requeues count: a message that always fails is dead-lettered after maxAttempts", async () => {
    const path = join(dir, "poison.ss");
    let calls = 0;
    const app = new RustStream({ name: "poison", version: "1.0.0" }).broker(
      new FileBroker({ path, consumer: "jobs" }),
      (b) => {
        b.subscriber("jobs")
          .maxAttempts(3)
          .deadLetter("jobs-dlq")
          .handle(() => {
            calls++;
            // A bound, so a requeue counted nowhere fails this test instead of looping for ever.
            return calls < 10 ? retry() : drop();
          });
      },
    );
    const t = await TestApp.start(app);
    try {
      // Each retry is a requeue the named consumer serves again: were it not counted, every one
      // would be attempt 1 and the message would never reach its cap.
      await t.publish("jobs", { id: "poison" });
      expect(calls).toBe(3);
      expect(t.published("jobs-dlq").map((m) => m.value)).toEqual([{ id: "poison" }]);
    } finally {
      await t.stop();
    }
  }, 30_000);

  it("writes headerless messages verbatim and envelopes the rest", async () => {
    const path = join(dir, "envelope.ss");
    const connected = await new FileBroker({ path }).connect();
    const sub = await connected.subscribe(
      new FileStream("e", { consumer: "c", start: "beginning" }),
    );
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const { HeaderMap } = await import("@ruststream/core");
    await publisher.publish({ name: "e", payload: utf8("plain") });
    await publisher.publish({
      name: "e",
      payload: utf8("lined"),
      headers: new HeaderMap({ a: "b" }),
    });
    await publisher.publish({
      name: "e",
      payload: utf8("binary"),
      headers: new HeaderMap({ a: new Uint8Array([0, 10, 255]) }),
    });
    await publisher.publish({ name: "e", payload: utf8("rs1:looks like one") });
    const wire = decodeFile(new Uint8Array(readFileSync(path)))
      .messages.filter((m) => m.streamKey === "e")
      .map((m) => text(m.payload));
    expect(wire[0]).toBe("plain");
    expect(wire[1]!.startsWith("rs1:")).toBe(true);
    expect(wire[2]!.startsWith("rs2:")).toBe(true);
    expect(wire[3]!.startsWith("rs1:")).toBe(true);
    const got = [];
    for (let i = 0; i < 4; i++) {
      const next = await sub.next();
      if (!next.done) got.push(next.value);
    }
    expect(got.map((d) => text(d.payload))).toEqual([
      "plain",
      "lined",
      "binary",
      "rs1:looks like one",
    ]);
    expect(got[1]!.headers.getString("a")).toBe("b");
    expect(got[2]!.headers.get("a")).toEqual(new Uint8Array([0, 10, 255]));
    expect(got.map((d) => d.headers.getString(SEQUENCE_HEADER))).toEqual(["1", "2", "3", "4"]);
    await connected.shutdown();
  });

  it("an unnamed consumer answers ack and requeue unsupported", async () => {
    const path = join(dir, "unnamed.ss");
    const connected = await new FileBroker({ path }).connect();
    const sub = await connected.subscribe("u");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: "u", payload: utf8("x") });
    const next = await sub.next();
    if (next.done) throw new Error("no delivery");
    expect(next.value.ack()).toBe("unsupported");
    expect(next.value.nack({ requeue: true })).toBe("unsupported");
    await connected.shutdown();
  });

  it("refuses a file that is not .ss, and bad names, writing nothing", async () => {
    const { writeFileSync } = await import("node:fs");
    const path = join(dir, "text.ss");
    writeFileSync(path, "x".repeat(500));
    await expect(new FileBroker({ path }).connect()).rejects.toMatchObject({
      code: "invalid-argument",
    });
    expect(readFileSync(path, "utf8")).toBe("x".repeat(500));
    expect(() => new FileBroker({ path, beaconInterval: 1000 })).toThrow(/multiple of 1024/);
    const connected = await new FileBroker({
      path: join(dir, "ok.ss"),
      maxMessageBytes: 64,
    }).connect();
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await expect(publisher.publish({ name: "bad key", payload: utf8("x") })).rejects.toMatchObject({
      code: "invalid-argument",
    });
    await expect(
      publisher.publish({ name: "k", payload: new Uint8Array(65) }),
    ).rejects.toMatchObject({
      code: "publish-refused",
    });
    await connected.shutdown();
  });
});
