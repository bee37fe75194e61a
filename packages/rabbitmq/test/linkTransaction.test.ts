import { isRustStreamError } from "@ruststream/core";
import { afterEach, describe, expect, it } from "vitest";
import type { Link } from "../src/link.js";
import { collect, message, queue, sides, text, unique } from "./linkHarness.js";

// A transaction's commit as the link makes it, on the real node and on the stand-in: what a commit
// the server refuses, or routes only in part, leaves published, and what the error says.

const open: Link[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((l) => l.close()));
});

describe.each(sides)("a transaction on the link ($side)", ({ open: make }) => {
  const link = async () => {
    const l = await make();
    open.push(l);
    return l;
  };

  const withQueue = async (l: Link, label: string) => {
    const name = unique(label);
    await l.ensure({ exchanges: [], queues: [queue(name, {}, false)], bindings: [] }, true);
    return name;
  };

  it("commits its messages in order, beside a confirmed publish", async () => {
    const l = await link();
    const name = await withQueue(l, "tx-order");
    await l.commit(["a", "b", "c"].map((body) => message("", name, body)));
    await l.publish(message("", name, "after"));
    const got = await collect(l, name);
    expect((await got.count(4)).map(text)).toEqual(["a", "b", "c", "after"]);
    for (const d of got.seen) d.ack();
  });

  it("a publish the server refuses (a missing exchange) closes the channel: nothing of the transaction is published, and the next one commits", async () => {
    const l = await link();
    const name = await withQueue(l, "tx-refused");
    const missing = unique("no-such-exchange");
    const refused = await l
      .commit([message("", name, "one"), message(missing, "k", "bad"), message("", name, "two")])
      .catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure"), String(refused)).toBe(true);
    expect((refused as Error).message).toContain(`NOT_FOUND - no exchange '${missing}'`);
    expect((refused as Error).message).toContain("none of it was published");
    // The next transaction goes on a new channel; it is the first thing the queue holds.
    await l.commit([message("", name, "next")]);
    const got = await collect(l, name);
    expect((await got.count(1)).map(text)).toEqual(["next"]);
    // A confirmed publish behind it arrives next: "one" and "two" were never enqueued.
    await l.publish(message("", name, "sentinel"));
    expect((await got.count(2)).map(text)).toEqual(["next", "sentinel"]);
    for (const d of got.seen) d.ack();
  });

  it("a mandatory message routed nowhere at commit is refused by name, and the rest is published", async () => {
    const l = await link();
    const name = await withQueue(l, "tx-partly");
    const nowhere = unique("no-such-queue");
    const refused = await l
      .commit([message("", name, "routed"), message("", nowhere, "returned")])
      .catch((e: unknown) => e);
    expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
    expect((refused as Error).message).toContain(`routing key "${nowhere}"`);
    expect((refused as Error).message).toContain("The rest of it (1 message) was committed");
    const got = await collect(l, name);
    expect((await got.count(1)).map(text)).toEqual(["routed"]);
    for (const d of got.seen) d.ack();
  });
});
