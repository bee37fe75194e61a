import { afterEach, describe, expect, it } from "vitest";
import type { Link } from "../src/link.js";
import { collect, message, queue, sides, text, unique } from "./linkHarness.js";

// Acks go as `basic.ack` with `multiple` (src/client/ackBatch.ts). Settled out of order, with drops
// among them (a rejected tag the server no longer knows: naming it in a multiple ack would close the
// channel), every message must be gone for good, and nothing acked before its turn. The sentinel
// published after the settles is the first thing a new consumer sees only if nothing came back.
// The 40 held unsettled at once outgrow the batch's first ring of tags (16), so they are settled
// from the ring it grew to.

const open: Link[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((l) => l.close()));
});

const count = 40;
/** Odd indices from the top down, then even ones from the bottom up: far from delivery order. */
const order = [
  ...Array.from({ length: count / 2 }, (_, i) => count - 1 - 2 * i),
  ...Array.from({ length: count / 2 }, (_, i) => 2 * i),
];
/** Every fifth is dropped, the last delivered among them. */
const dropped = (i: number) => i % 5 === 4;

describe.each(sides)("acks settled out of order, drops among them ($side)", ({ open: make }) => {
  it.each([
    "classic",
    "quorum",
  ])("a %s queue keeps nothing, and the channel lives", async (type) => {
    const link = await make();
    open.push(link);
    const name = unique(`acks-${type}`);
    await link.ensure(
      { exchanges: [], queues: [queue(name, { "x-queue-type": type })], bindings: [] },
      true,
    );
    for (let i = 0; i < count; i++) await link.publish(message("", name, `m${i}`));
    const first = await collect(link, name, count);
    const deliveries = await first.count(count);
    expect(deliveries.map(text)).toEqual(Array.from({ length: count }, (_, i) => `m${i}`));
    for (const i of order) {
      if (dropped(i)) deliveries[i]!.reject(false);
      else deliveries[i]!.ack();
    }
    await first.consumer.cancel();
    await link.publish(message("", name, "sentinel"));
    const second = await collect(link, name, count);
    expect((await second.count(1)).map(text)).toEqual(["sentinel"]);
    second.seen[0]!.ack();
    await second.consumer.cancel();
    expect(second.seen.map(text)).toEqual(["sentinel"]);
  });
});

// A delivery held open (a slow handler, a stream's delayed retry) must not stall those behind it:
// their acks count against the prefetch until sent, and a multiple ack cannot pass the open one
// (a stream's consumer runs on the same acks).
// With a prefetch of 8 and the first delivery never settled, the next 40 each come once the one
// before is acked, and after them the held one is acked and nothing comes back.
const behind = 40;
describe.each(sides)("a delivery held open ($side)", ({ open: make }) => {
  it.each([
    "classic",
    "quorum",
  ])("on a %s queue, does not hold back the acks behind it past the prefetch", async (type) => {
    const link = await make();
    open.push(link);
    const name = unique(`held-${type}`);
    await link.ensure(
      { exchanges: [], queues: [queue(name, { "x-queue-type": type })], bindings: [] },
      true,
    );
    for (let i = 0; i <= behind; i++) await link.publish(message("", name, `m${i}`));
    // Every delivery but the first is acked as it comes.
    const held = await collect(link, name, 8, (d) => {
      if (text(d) !== "m0") d.ack();
    });
    const deliveries = await held.count(behind + 1);
    expect(deliveries.map(text)).toEqual(Array.from({ length: behind + 1 }, (_, i) => `m${i}`));
    deliveries[0]!.ack();
    await held.consumer.cancel();
    await link.publish(message("", name, "sentinel"));
    const after = await collect(link, name, 8);
    expect((await after.count(1)).map(text)).toEqual(["sentinel"]);
    after.seen[0]!.ack();
    await after.consumer.cancel();
    expect(after.seen.map(text)).toEqual(["sentinel"]);
  });
});
