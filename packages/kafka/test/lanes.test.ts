import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { sleep, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { KafkaTopic } from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";

// workers(n, { key: "partition" }) on a KafkaTopic: deliveries report their partition, so each
// partition's records run on one lane, in offset order, even with handlers of uneven length, while
// the partitions run side by side. On both engines and in-process.

for (const where of everywhere) {
  describe(where, () => {
    it("lanes by partition keep each partition's order", async () => {
      const topic = uniqueName(`lanes-${where}`);
      const broker = brokerFor(where);
      const setup = await connect(where, broker);
      try {
        const created = await setup.subscribe(
          new KafkaTopic(topic, { group: `g-${topic}`, create: { partitions: 3 } }),
        );
        await created.close();
      } finally {
        await setup.shutdown();
      }
      const seen: Array<{ partition: number; n: number }> = [];
      const app = new RustStream({ name: `lanes-${topic}`, version: "1.0.0" }).broker(
        broker,
        (b) => {
          b.subscriber(new KafkaTopic(topic, { commit: "tracked" }))
            .workers(3, { key: "partition" })
            .handle(async (message, ctx) => {
              const { n } = message as { n: number };
              // Uneven work: a later record of another partition may finish first, never one of this.
              await sleep((n * 7) % 5);
              seen.push({ partition: ctx.delivery.partition!, n });
            });
        },
      );
      const t =
        where === "in-process"
          ? await TestApp.start(app)
          : await TestApp.startLive(app, { withinMs: 30_000 });
      try {
        for (let n = 0; n < 30; n++) {
          await t.publishRaw(topic, JSON.stringify({ n }), { partitionKey: `key-${n % 5}` });
        }
        await t.settle();
      } finally {
        await t.stop();
      }
      expect(seen.length).toBe(30);
      const partitions = new Set(seen.map((s) => s.partition));
      expect(partitions.size, "keys spread over several partitions").toBeGreaterThan(1);
      for (const partition of partitions) {
        const order = seen.filter((s) => s.partition === partition).map((s) => s.n);
        expect(order, `partition ${partition}`).toEqual([...order].sort((a, b) => a - b));
      }
    }, 90_000);
  });
}
