import { describe, expect, test } from "vitest";
import { sourceMark } from "../../src/brokerEntry.js";
import { drop, MemoryBroker, MemoryTopic, RustStream, retry } from "../../src/index.js";
import { startInProcess } from "./harness.js";

const tick = () => new Promise((r) => setTimeout(r, 1));

describe("workers", () => {
  test("workers(n) runs up to n handlers at once, never more", async () => {
    let running = 0;
    let peak = 0;
    const app = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("jobs")
        .workers(3)
        .handle(async () => {
          running++;
          peak = Math.max(peak, running);
          await tick();
          running--;
        });
    });
    const h = await startInProcess(app);
    const memory = h.running.connection() as unknown as { inject(m: object): void };
    for (let i = 0; i < 10; i++)
      memory.inject({ name: "jobs", payload: new TextEncoder().encode(String(i)) });
    await h.quiet();
    expect(peak).toBe(3);
    expect(h.outcomes("jobs")).toHaveLength(10);
    await h.running.stop();
  });

  test("keyed lanes keep per-key order under concurrency", async () => {
    const seen = new Map<string, number[]>();
    const app = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders")
        .workers(4, { key: (m: unknown) => (m as { k: string }).k })
        .handle(async (m) => {
          const { k, n } = m as { k: string; n: number };
          // Later messages of a key finish faster: only lanes keep them in order.
          await new Promise((r) => setTimeout(r, (8 - n) % 3));
          seen.set(k, [...(seen.get(k) ?? []), n]);
        });
    });
    const h = await startInProcess(app);
    const memory = h.running.connection() as unknown as { inject(m: object): void };
    for (let n = 0; n < 8; n++) {
      for (const k of ["a", "b", "c"]) {
        memory.inject({
          name: "orders",
          payload: new TextEncoder().encode(JSON.stringify({ k, n })),
        });
      }
    }
    await h.quiet();
    for (const k of ["a", "b", "c"]) expect(seen.get(k)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await h.running.stop();
  });

  test('keyed lanes on the partition key ("partitionKey") keep per-key order', async () => {
    const seen = new Map<string, number[]>();
    const app = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber<{ n: number }>("orders")
        .workers(3, { key: "partitionKey" })
        .handle(async ({ n }, ctx) => {
          const key = new TextDecoder().decode(ctx.delivery.partitionKey);
          // Later messages finish faster: only lanes by key keep each key in order.
          await new Promise((r) => setTimeout(r, (8 - n) % 3));
          seen.set(key, [...(seen.get(key) ?? []), n]);
        });
    });
    const h = await startInProcess(app);
    for (let n = 0; n < 8; n++) {
      for (const k of ["k1", "k2", "k3", "k4"]) {
        await h.running.publish("orders", { n }, { partitionKey: k });
      }
    }
    await h.quiet();
    for (const k of ["k1", "k2", "k3", "k4"]) {
      expect(seen.get(k), k).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    }
    await h.running.stop();
  });

  test("keyed lanes on a source that carries no key are refused at startup", async () => {
    const keyless = Object.assign(new MemoryTopic("plain"), { carriesPartitionKey: false });
    const app = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber(keyless)
        .workers(2, { key: "partitionKey" })
        .handle(() => {});
    });
    await expect(app.start()).rejects.toThrow(/carries no partition key/);
    expect(keyless[sourceMark]).toBe("memory");
  });

  test("a mount without a handler, and two subscribers with one name, are refused", async () => {
    const a = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x");
    });
    await expect(a.start()).rejects.toThrow(/no handler/);
    const b2 = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("x").handle(() => {});
      b.subscriber("x").handle(() => {});
    });
    await expect(b2.start()).rejects.toThrow(/share this name/);
  });
});

describe("batches", () => {
  test("one outcome per element, decode failures settled apart", async () => {
    const batches: unknown[][] = [];
    const app = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("in")
        .maxAttempts(1)
        .batch(10)
        .handle((messages) => {
          batches.push([...messages]);
          // maxAttempts(1): the retry() of 3 is already the last attempt, so it drops too.
          return messages.map((m) => (m === 3 ? retry() : drop()));
        });
    });
    const h = await startInProcess(app);
    const memory = h.running.connection() as unknown as { inject(m: object): void };
    for (const text of ["1", "2", "{bad", "3"]) {
      memory.inject({ name: "in", payload: new TextEncoder().encode(text) });
    }
    await h.quiet();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(h.outcomes("in").map((e) => e.outcome)).toEqual(["drop", "drop", "drop", "drop"]);
    await h.running.stop();
  });

  test("one outcome for the whole batch, and a wrong count fails the batch", async () => {
    // Sizes seen by the handler, checked after the run: an expect() in the handler would only be a
    // thrown error the runtime turns into a retry.
    const sizes: number[] = [];
    const app = new RustStream({ name: "w", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("in")
        .batch(10)
        .handle(async (messages) => {
          sizes.push(messages.length);
          if (sizes.length === 1) return [drop()];
          return undefined;
        });
    });
    const h = await startInProcess(app);
    const memory = h.running.connection() as unknown as { inject(m: object): void };
    memory.inject({ name: "in", payload: new TextEncoder().encode("1") });
    memory.inject({ name: "in", payload: new TextEncoder().encode("2") });
    await h.quiet();
    await h.advance(1000);
    const outcomes = h.outcomes("in").map((e) => e.outcome);
    expect(sizes).toEqual([2, 2]);
    expect(outcomes).toEqual(["retry-after", "retry-after", "ack", "ack"]);
    await h.running.stop();
  });
});
