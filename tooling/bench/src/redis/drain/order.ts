// The message every drain row decodes: a JSON order of exactly 512 bytes, the same fields as the
// serde struct of tooling/interop's `bench-redis-drain` (src/bench_redis.rs), distinct per entry (its
// id), so the bench checks every row decoded every entry by the sum of the ids it saw.
import type { StandardSchemaV1 } from "@ruststream/core";

export const orderBytes = 512;

export interface Order {
  readonly id: number;
  readonly sku: string;
  readonly qty: number;
  readonly price_cents: number;
  readonly currency: string;
  readonly customer: string;
  readonly express: boolean;
  readonly note: string;
}

/** The order with id `id`, as UTF-8 JSON of exactly `orderBytes` bytes (the note pads it). */
export function orderPayload(id: number): Buffer {
  const order: Order = {
    id,
    sku: `sku-${id % 9973}`,
    qty: 1 + (id % 7),
    price_cents: 100 + ((id * 37) % 100_000),
    currency: "EUR",
    customer: `customer-${id % 100_003}`,
    express: id % 3 === 0,
    note: "",
  };
  const bare = JSON.stringify(order).length;
  const note = "deliver to the back door, ring twice; ".repeat(16).slice(0, orderBytes - bare);
  const payload = Buffer.from(JSON.stringify({ ...order, note }), "utf8");
  if (payload.length !== orderBytes) throw new Error(`order ${id}: ${payload.length} bytes`);
  return payload;
}

/** The sum of the ids 0..count-1, which a row that decoded every entry once has seen. */
export function idSum(count: number): bigint {
  const n = BigInt(count);
  return (n * (n - 1n)) / 2n;
}

const issue = (message: string): StandardSchemaV1.FailureResult => ({ issues: [{ message }] });

/**
 * A Standard Schema validator of the order, written out by hand as a validator library's compiled
 * check would run: every field's type, and the object it came in. The schema row measures the
 * runtime's schema path with a check that costs about what serde's typed struct does in Rust.
 */
export const orderSchema: StandardSchemaV1<unknown, Order> = {
  "~standard": {
    version: 1,
    vendor: "ruststream-bench",
    validate(value: unknown): StandardSchemaV1.Result<Order> {
      if (typeof value !== "object" || value === null) return issue("expected an object");
      const o = value as Record<string, unknown>;
      if (!Number.isSafeInteger(o.id) || (o.id as number) < 0) return issue("id: a u64");
      if (typeof o.sku !== "string") return issue("sku: a string");
      if (!Number.isSafeInteger(o.qty) || (o.qty as number) < 0) return issue("qty: a u32");
      if (!Number.isSafeInteger(o.price_cents) || (o.price_cents as number) < 0) {
        return issue("price_cents: a u64");
      }
      if (typeof o.currency !== "string") return issue("currency: a string");
      if (typeof o.customer !== "string") return issue("customer: a string");
      if (typeof o.express !== "boolean") return issue("express: a boolean");
      if (typeof o.note !== "string") return issue("note: a string");
      return { value: o as unknown as Order };
    },
  },
};
