import { describe, expect, it } from "vitest";
import { CountingCoordinator } from "../src/brokerEntry.js";
import {
  type ConnectionChange,
  HeaderMap,
  isRustStreamError,
  ManualClock,
  MemoryBroker,
  MemoryPublish,
  MemoryQueue,
  MemoryTopic,
  readDeadLetterOrigin,
} from "../src/index.js";

const text = new TextEncoder();
const bytes = (s: string) => text.encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);

async function setup(options: ConstructorParameters<typeof MemoryBroker>[0] = {}) {
  const broker = new MemoryBroker(options);
  const connected = await broker.connect();
  const publisher = await new MemoryPublish().pair(connected);
  return { broker, connected, publisher };
}

describe("memory broker", () => {
  it("delivers in order and settles synchronously", async () => {
    const { connected, publisher } = await setup();
    const sub = await connected.subscribe("orders");
    for (let i = 0; i < 3; i++)
      await publisher.publish({ name: "orders", payload: bytes(`m${i}`) });
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const next = await sub.next();
      if (next.done) throw new Error("ended");
      got.push(str(next.value.payload));
      expect(next.value.ack()).toBe("ok");
    }
    expect(got).toEqual(["m0", "m1", "m2"]);
  });

  it("fans out to groups and shares within a group", async () => {
    const { connected, publisher } = await setup();
    const a1 = await connected.subscribe(new MemoryTopic("t", { group: "a" }));
    const a2 = await connected.subscribe(new MemoryTopic("t", { group: "a" }));
    const b = await connected.subscribe(new MemoryTopic("t", { group: "b" }));
    const pa1 = a1.next();
    const pa2 = a2.next();
    await publisher.publish({ name: "t", payload: bytes("1") });
    await publisher.publish({ name: "t", payload: bytes("2") });
    const [r1, r2] = await Promise.all([pa1, pa2]);
    expect([r1.value, r2.value].map((d) => str(d!.payload))).toEqual(["1", "2"]);
    expect(await b.nextBatch(10)).toHaveLength(2);
  });

  it("requeues to the front and counts deliveries", async () => {
    const { connected, publisher } = await setup();
    const sub = await connected.subscribe(new MemoryTopic("r", { group: "g" }));
    await publisher.publish({ name: "r", payload: bytes("x") });
    await publisher.publish({ name: "r", payload: bytes("y") });
    const first = (await sub.next()).value!;
    expect(first.redeliveryCount).toBe(1);
    expect(first.nack({ requeue: true })).toBe("ok");
    const again = (await sub.next()).value!;
    expect(str(again.payload)).toBe("x");
    expect(again.redeliveryCount).toBe(2);
    expect(() => first.ack()).toThrow(/already settled/);
  });

  it("redelivers after a delay on the injected clock", async () => {
    const clock = new ManualClock();
    const { connected, publisher } = await setup({ clock });
    const sub = await connected.subscribe("d");
    await publisher.publish({ name: "d", payload: bytes("later") });
    const d = (await sub.next()).value!;
    expect(d.nackAfter(500)).toBe("ok");
    const pending = sub.next();
    clock.advance(499);
    let arrived = false;
    void pending.then(() => {
      arrived = true;
    });
    // A turn of the event loop runs every reaction a delivery at 499 ms would have set off.
    await new Promise((resolve) => setImmediate(resolve));
    expect(arrived).toBe(false);
    clock.advance(1);
    expect(str((await pending).value!.payload)).toBe("later");
  });

  it("moves a queue's message to its dead letter after maxAttempts", async () => {
    const { connected, publisher } = await setup();
    const queue = new MemoryQueue("jobs").declareRetry({ maxAttempts: 2, deadLetter: "jobs-dlq" });
    const sub = await connected.subscribe(queue);
    const dlq = await connected.subscribe(new MemoryQueue("jobs-dlq"));
    await publisher.publish({ name: "jobs", payload: bytes("bad") });
    (await sub.next()).value!.nack({ requeue: true });
    (await sub.next()).value!.nack({ requeue: true });
    const dead = (await dlq.next()).value!;
    expect(readDeadLetterOrigin(dead.headers)).toEqual({
      source: "jobs",
      position: "0",
      reason: "max-attempts",
    });
  });

  it("refuses half a retry declaration", async () => {
    const { connected } = await setup();
    await expect(connected.subscribe(new MemoryQueue("q", { maxAttempts: 3 }))).rejects.toThrow(
      /declare both/,
    );
  });

  it("a delivery handed out before a close still settles after it, and one never settled comes back at shutdown", async () => {
    const { broker, connected, publisher } = await setup();
    const group = new MemoryTopic("closing", { group: "g" });
    const sub = await connected.subscribe(group);
    for (const m of ["acked", "left"])
      await publisher.publish({ name: "closing", payload: bytes(m) });
    const acked = (await sub.next()).value!;
    const left = (await sub.next()).value!;
    expect([str(acked.payload), str(left.payload)]).toEqual(["acked", "left"]);
    await sub.close();
    // An app's graceful stop closes first and drains after: the handler's ack lands.
    expect(acked.ack()).toBe("ok");
    const closed = await connected.shutdown();
    // The closed subscription still held "left": the shutdown gives it back to the group.
    expect(closed.returnedDeliveries).toBe(1);
    const next = await broker.connect();
    const again = await next.subscribe(group);
    await new MemoryPublish()
      .pair(next)
      .then((p) => p.publish({ name: "closing", payload: bytes("sentinel") }));
    const read: string[] = [];
    for (let i = 0; i < 2; i++) {
      const d = (await again.next()).value!;
      read.push(str(d.payload));
      d.ack();
    }
    expect(read).toEqual(["left", "sentinel"]);
    await next.shutdown();
  });

  it("rejects everything after shutdown, and a second shutdown is harmless", async () => {
    const { connected, publisher } = await setup();
    const sub = await connected.subscribe("s");
    const waiting = sub.next();
    const closed = await connected.shutdown();
    await expect(waiting).rejects.toSatisfy((e) => isRustStreamError(e, "closed"));
    await expect(publisher.publish({ name: "s", payload: bytes("") })).rejects.toSatisfy((e) =>
      isRustStreamError(e, "closed"),
    );
    await expect(new MemoryPublish().pair(connected)).rejects.toThrow(/after shutdown/);
    expect(await connected.shutdown()).toBe(closed);
    expect(closed.state).toBe("closed");
  });

  it("is connected until shut down, and tells the connecting side's listener closed once", async () => {
    const heard: ConnectionChange[] = [];
    const connected = await new MemoryBroker().connect({ onState: (c) => heard.push(c) });
    expect(connected.state).toBe("connected");
    await connected.shutdown();
    await connected.shutdown();
    expect(connected.state).toBe("closed");
    expect(heard).toEqual([{ state: "closed" }]);
  });

  it("counts for a coordinator until settled", async () => {
    const coordinator = new CountingCoordinator();
    const broker = new MemoryBroker();
    const connected = await broker.connectInProcess({ coordinator, clock: new ManualClock() });
    const sub = await connected.subscribe("c");
    connected.inject({ name: "c", payload: bytes("1"), headers: new HeaderMap({ a: "b" }) });
    expect(coordinator.outstanding).toBe(1);
    const d = (await sub.next()).value!;
    d.ack();
    expect(coordinator.outstanding).toBe(0);
    expect(connected.published("c").map((m) => m.headers.getString("a"))).toEqual(["b"]);
  });

  it("injects on every connection; records for published() only in process, in a log the broker object's in-process connections share", async () => {
    const broker = new MemoryBroker();
    const plain = await broker.connect();
    const sub = await plain.subscribe(new MemoryTopic("p", { group: "g" }));
    plain.inject({ name: "p", payload: bytes("from a plain connection") });
    expect(str((await sub.next()).value!.payload)).toBe("from a plain connection");
    expect(() => plain.published("p")).toThrow(
      "published() records only on an in-process connection: connect with connectInProcess()",
    );
    const options = { coordinator: new CountingCoordinator(), clock: new ManualClock() };
    const first = await broker.connectInProcess(options);
    const second = await broker.connectInProcess(options);
    first.inject({ name: "p", payload: bytes("injected") });
    await (await new MemoryPublish().pair(second)).publish({
      name: "p",
      payload: bytes("published"),
    });
    for (const connected of [first, second]) {
      expect(connected.published("p").map((m) => str(m.payload))).toEqual([
        "injected",
        "published",
      ]);
    }
    await Promise.all([plain.shutdown(), first.shutdown(), second.shutdown()]);
  });

  it("answers requests through a reply inbox", async () => {
    const { connected, publisher } = await setup();
    const sub = await connected.subscribe("ask");
    void (async () => {
      const d = (await sub.next()).value!;
      d.ack();
      const headers = new HeaderMap().set("correlation-id", d.headers.get("correlation-id")!);
      await publisher.publish({
        name: d.headers.getString("reply-to")!,
        payload: bytes("pong"),
        headers,
      });
    })();
    const reply = await publisher.request(
      { name: "ask", payload: bytes("ping") },
      { timeoutMs: 1000 },
    );
    expect(str(reply.payload)).toBe("pong");
  });
});
