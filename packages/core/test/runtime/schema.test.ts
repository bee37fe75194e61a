import { type } from "arktype";
import * as v from "valibot";
import { describe, expect, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { MemoryBroker, RustStream, type StandardSchemaV1 } from "../../src/index.js";
import { startInProcess } from "./harness.js";

const schemas = {
  zod: z.object({ id: z.number().int(), sku: z.string() }),
  valibot: v.object({ id: v.pipe(v.number(), v.integer()), sku: v.string() }),
  arktype: type({ id: "number.integer", sku: "string" }),
};

describe.each(Object.entries(schemas))("Standard Schema: %s", (_, schema) => {
  test("validates, types the handler's message, and rejects a violation as a decode failure", async () => {
    const seen: Array<{ id: number; sku: string }> = [];
    const app = new RustStream({ name: "s", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders", {
        schema: schema as StandardSchemaV1<unknown, { id: number; sku: string }>,
      }).handle((order) => {
        expectTypeOf(order).toEqualTypeOf<{ id: number; sku: string }>();
        seen.push(order);
      });
    });
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1, sku: "a" });
    await h.publish("orders", { id: 1.5, sku: "a" });
    await h.publish("orders", { sku: 3 });
    expect(seen).toEqual([{ id: 1, sku: "a" }]);
    expect(h.outcomes("orders").map((e) => e.handled)).toEqual([true, false, false]);
    await h.running.stop();
  });
});

test("the message type is inferred from each library's schema", () => {
  new RustStream({ name: "s", version: "0" }).broker(new MemoryBroker(), (b) => {
    b.subscriber("a", { schema: schemas.zod }).handle((m) => {
      expectTypeOf(m).toEqualTypeOf<{ id: number; sku: string }>();
    });
    b.subscriber("b", { schema: schemas.valibot }).handle((m) => {
      expectTypeOf(m).toEqualTypeOf<{ id: number; sku: string }>();
    });
    b.subscriber("c", { schema: schemas.arktype }).handle((m) => {
      expectTypeOf(m).toEqualTypeOf<{ id: number; sku: string }>();
    });
    b.subscriber("d").handle((m) => {
      expectTypeOf(m).toEqualTypeOf<unknown>();
    });
    // Without reply(), returning a value is a type error; with it, the reply type is checked.
    // @ts-expect-error a subscriber without reply() cannot return a value
    b.subscriber("e").handle(() => ({ not: "allowed" }));
    b.subscriber("f")
      .reply<{ ok: boolean }>("out")
      // @ts-expect-error the reply must match reply<T>()
      .handle(() => ({ ok: "yes" }));
  });
});
