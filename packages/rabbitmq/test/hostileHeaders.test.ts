import { Worker } from "node:worker_threads";
import { type RuntimeEvent, RustStream, readDeadLetterOrigin } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQueue } from "../src/index.js";

// A message whose header table nests 10,000 deep, published by another client between good ones
// on the real node. amqplib's decoder overflowed its stack on it: the connection failed, and after
// each reconnect the node delivered it again. Now the frame guard marks it unreadable before
// amqplib decodes it: it is dead-lettered by the decode policy, the connection stays up, and
// every good message is handled once.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

// 7 bytes a level: amqplib's encoder writes a table of at most 64 KiB.
const depth = 9_000;

/** Publishes the deep message from a worker with a stack amqplib's recursive encoder fits in. */
function publishDeep(url: string, queue: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./fixtures/deepHeaderPublish.mjs", import.meta.url), {
      workerData: { url, queue, depth, payload: JSON.stringify({ id: "poison" }) },
      resourceLimits: { stackSizeMb: 256 },
    });
    worker.once("message", () => resolve());
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the publishing worker exited with ${code}`));
    });
  });
}

describe("a header table nested 9,000 deep (real node)", () => {
  it("is dead-lettered as unreadable, the connection stays up, and the messages around it are handled", async () => {
    const url = requireEnv("RABBITMQ_URL");
    const queue = uniqueName("deep-header");
    const dlq = `${queue}.dlq`;
    const handled: string[] = [];
    const states: string[] = [];
    const app = new RustStream({ name: `deep-${queue}`, version: "1.0.0" }).broker(
      new RabbitBroker({ url, declare: true, topology: [new RabbitQueue(dlq)] }),
      (b) => {
        b.subscriber(new RabbitQueue(queue))
          .deadLetter(dlq)
          .handle((message) => {
            handled.push((message as { id: string }).id);
          });
      },
    );
    app.observe((event: RuntimeEvent) => {
      if (event.type === "broker-connection") states.push(event.state);
    });
    t = await TestApp.startLive(app, { withinMs: 30_000 });
    const connected = await new RabbitBroker({ url, declare: true }).connect();
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const good = (id: string) =>
        publisher.publish({
          name: queue,
          payload: new TextEncoder().encode(JSON.stringify({ id })),
        });
      await good("good 0");
      await publishDeep(url, queue);
      await good("good 1");
      const deadline = Date.now() + 20_000;
      while (handled.length < 2 || !t.subscriber(queue).outcomes.includes("dead-letter")) {
        if (Date.now() > deadline) {
          throw new Error(
            `handled ${handled}; outcomes ${t.subscriber(queue).outcomes}; states ${states}`,
          );
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(handled).toEqual(["good 0", "good 1"]);
      expect(states.filter((s) => s !== "connected")).toEqual([]);
      const dead = await connected.subscribe(new RabbitQueue(dlq));
      const copy = (await dead.next()).value;
      await copy?.ack();
      await dead.close();
      expect(JSON.parse(new TextDecoder().decode(copy?.payload))).toEqual({ id: "poison" });
      const origin = copy === undefined ? undefined : readDeadLetterOrigin(copy.headers);
      expect(origin?.source).toBe(queue);
      // Dead-lettered by the decode policy; the log line names the header and the limit.
      expect(origin?.reason).toBe("decode");
    } finally {
      await connected.shutdown();
    }
  });
});
