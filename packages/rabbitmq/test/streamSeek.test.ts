import { randomUUID } from "node:crypto";
import { isRustStreamError, systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ConnectedRabbitBroker,
  parseRabbitStreamPosition,
  RabbitBroker,
  RabbitPosition,
  RabbitStream,
  RabbitStreamTimePosition,
  type StreamSubscription,
} from "../src/index.js";

// A stream subscription's seek by time (the seeking suite seeks by offset), and what a seek refuses,
// on the node and on the stand-in alike.

const open: ConnectedRabbitBroker[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.shutdown()));
});

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (payload: Uint8Array) => new TextDecoder().decode(payload);

const sides = [
  {
    side: "node",
    connect: () => new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true }).connect(),
  },
  {
    side: "stand-in",
    connect: () =>
      new RabbitBroker({ url: "amqp://in-process.invalid:5672", declare: true }).connectInProcess({
        coordinator: new CountingCoordinator(),
        clock: systemClock,
      }),
  },
] as const;

async function deleteOnNode(stream: string): Promise<void> {
  const auth = `${requireEnv("RABBITMQ_USERNAME")}:${requireEnv("RABBITMQ_PASSWORD")}`;
  await fetch(`${requireEnv("RABBITMQ_MANAGEMENT_URL")}/api/queues/%2F/${stream}`, {
    method: "DELETE",
    headers: { authorization: `Basic ${Buffer.from(auth).toString("base64")}` },
  });
}

describe.each(sides)("a stream subscription seeks ($side)", ({ side, connect }) => {
  it("to a time: the first message stored in that second or later, then on", async () => {
    const connected = await connect();
    open.push(connected);
    const stream = `seek-time-${randomUUID().slice(0, 8)}`;
    const subscription = (await connected.subscribe(
      new RabbitStream(stream),
    )) as StreamSubscription;
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (const p of ["a", "b"]) await publisher.publish({ name: stream, payload: bytes(p) });
    // A stream's time is to the second (AMQP's timestamp): the later messages go in a later one.
    const second = Math.ceil((Date.now() + 1) / 1000) * 1000;
    await new Promise((resolve) => setTimeout(resolve, second - Date.now() + 20));
    for (const p of ["c", "d"]) await publisher.publish({ name: stream, payload: bytes(p) });
    const read = async (n: number) => {
      const got: string[] = [];
      for (let i = 0; i < n; i++) {
        const d = (await subscription.next()).value!;
        got.push(`${text(d.payload)}@${d.position.offset}`);
        await d.ack();
      }
      return got;
    };
    expect(await read(4)).toEqual(["a@0", "b@1", "c@2", "d@3"]);
    const at = new RabbitStreamTimePosition(second);
    expect(parseRabbitStreamPosition(at.toString())).toEqual(at);
    await subscription.seek(at);
    expect(await read(2)).toEqual(["c@2", "d@3"]);
    await subscription.seek(new RabbitStreamTimePosition(0));
    expect(await read(1)).toEqual(["a@0"]);
    await subscription.close();
    if (side === "node") await deleteOnNode(stream);
  });

  it("refuses another stream's position, and a position it has not written", async () => {
    const connected = await connect();
    open.push(connected);
    const stream = `seek-refused-${randomUUID().slice(0, 8)}`;
    const subscription = (await connected.subscribe(
      new RabbitStream(stream),
    )) as StreamSubscription;
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: stream, payload: bytes("only") });
    const only = (await subscription.next()).value!;
    expect(`${text(only.payload)}@${only.position.offset}`).toBe("only@0");
    await only.ack();
    const foreign = await subscription.seek(new RabbitPosition("elsewhere", 0, 0n)).catch((e) => e);
    expect(isRustStreamError(foreign, "foreign-value")).toBe(true);
    const unwritten = await subscription.seek(new RabbitPosition(stream, 0, 2n)).catch((e) => e);
    expect(isRustStreamError(unwritten, "unknown-position")).toBe(true);
    expect(unwritten.message).toContain("holds offsets 0 to 0");
    // The next offset is where a reader waits for the next message: a seek there is no refusal.
    await subscription.seek(new RabbitPosition(stream, 0, 1n));
    await publisher.publish({ name: stream, payload: bytes("next") });
    const d = (await subscription.next()).value!;
    expect(`${text(d.payload)}@${d.position.offset}`).toBe("next@1");
    await d.ack();
    expect(() => subscription.parsePosition("no offset here")).toThrow(/not a stream position/);
    await subscription.close();
    if (side === "node") await deleteOnNode(stream);
  });

  it("settles a delivery handed out before a seek: moving past it, nothing on the server", async () => {
    const connected = await connect();
    open.push(connected);
    const stream = `seek-stale-${randomUUID().slice(0, 8)}`;
    const subscription = (await connected.subscribe(
      new RabbitStream(stream, { offset: "first" }),
    )) as StreamSubscription;
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: stream, payload: bytes("a") });
    const before = (await subscription.next()).value!;
    await subscription.seek(new RabbitStreamTimePosition(0));
    // Its consumer is gone with the seek: the ack used to throw, as for a lost connection.
    await before.ack();
    const again = (await subscription.next()).value!;
    expect(`${text(again.payload)}@${again.position.offset}`).toBe("a@0");
    await again.ack();
    await subscription.close();
    if (side === "node") await deleteOnNode(stream);
  });
});
