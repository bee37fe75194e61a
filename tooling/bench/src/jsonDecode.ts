// Core's JSON decode against the raw loops' own, one process per side, for a whole-process timer
// (`/usr/bin/time -v`, or any that reports user and system CPU) to hold side by side:
//
//   node --conditions=@ruststream/source --import tsx src/jsonDecode.ts <core|buffer> [count]
//
// `core`: `json.decode` of @ruststream/core (a fatal `TextDecoder`, then `JSON.parse`), what the
// runtime runs for every delivery. `buffer`: `JSON.parse(payload.toString("utf8"))`, the raw amqplib
// loop's. Both decode the drains' 512-byte orders (`order.ts`), 1,024 of them in turn, `count`
// times in all (default 1,000,000), and print the sum of the ids they read, so neither is optimised
// away. A run with count 0 gives the start-up to take off both.
import { json } from "@ruststream/core";
import { type Order, orderPayload } from "./redis/drain/order.js";

const [side = "core", countArg = "1000000"] = process.argv.slice(2);
const count = Number(countArg);
if (!Number.isSafeInteger(count) || count < 0) {
  throw new Error(`count ${countArg}: give a whole number of decodes, 0 or more`);
}

const decoders: Record<string, (payload: Buffer) => Order> = {
  core: (payload) => json.decode(payload) as Order,
  buffer: (payload) => JSON.parse(payload.toString("utf8")) as Order,
};
const decode = decoders[side];
if (decode === undefined) throw new Error(`side ${side}: give core or buffer`);

const payloads = Array.from({ length: 1024 }, (_, id) => orderPayload(id));
let ids = 0;
for (let i = 0; i < count; i++) ids += decode(payloads[i & 1023]!).id;
console.log(`${side}: ${count} decodes, ids summed ${ids}`);
