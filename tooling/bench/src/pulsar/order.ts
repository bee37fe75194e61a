// The orders every Pulsar row sends or reads: 512 bytes of JSON, the same fields as the Redis drain's
// `Order`, made from one template whose id is ten ASCII digits at byte 6 (1000000000 + the order's
// number), so both clients make and read a payload with the same work: copy the template, write ten
// digits; read ten digits back. Every row checks the number of orders and the sum of their numbers.
import type { Order } from "../redis/drain/order.js";

export type { Order };

export const orderBytes = 512;
/** Where the id's digits sit in the payload, and how many there are. */
export const idAt = 6;
const idDigits = 10;
/** Ids start here so each has exactly ten digits: a JSON number without leading zeros. */
export const idBase = 1_000_000_000;

function makeTemplate(): Buffer {
  const order: Order = {
    id: idBase,
    sku: "sku-4711",
    qty: 3,
    price_cents: 12_990,
    currency: "EUR",
    customer: "customer-80422",
    express: false,
    note: "",
  };
  const bare = JSON.stringify(order).length;
  const note = "deliver to the back door, ring twice; ".repeat(16).slice(0, orderBytes - bare);
  const payload = Buffer.from(JSON.stringify({ ...order, note }), "utf8");
  if (payload.length !== orderBytes || payload.toString("latin1", 0, idAt) !== '{"id":') {
    throw new Error(`the order template is ${payload.length} bytes, its id not at byte ${idAt}`);
  }
  return payload;
}

/** The template: the Java worker gets it too (base64), so both send the same bytes. */
export const orderTemplate: Buffer = makeTemplate();

/** The order numbered `n` (0-based): a copy of the template with its id written in. */
export function orderPayload(n: number): Buffer {
  const payload = Buffer.allocUnsafe(orderBytes);
  orderTemplate.copy(payload);
  let id = idBase + n;
  for (let i = idAt + idDigits - 1; i >= idAt; i--) {
    payload[i] = 48 + (id % 10);
    id = Math.floor(id / 10);
  }
  return payload;
}

/** The order's number read from its payload's digits, without decoding the JSON. */
export function orderNumber(payload: Uint8Array): number {
  let id = 0;
  for (let i = idAt; i < idAt + idDigits; i++) id = id * 10 + (payload[i]! - 48);
  return id - idBase;
}

/** The sum of the numbers 0..count-1, which a row that read every order once has seen. */
export function numberSum(count: number): bigint {
  const n = BigInt(count);
  return (n * (n - 1n)) / 2n;
}
