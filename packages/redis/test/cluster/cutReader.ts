import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import type { Cluster, Redis } from "ioredis";
import { expect } from "vitest";
import { RedisBroker, type RedisBrokerOptions, RedisStream } from "../../src/index.js";
import type { RedisStreamSubscription } from "../../src/stream/streamSubscription.js";

// The cut the stream subscription recovers from (its blocking connection came back, so a read's
// reply may have been lost on the way), made on another deployment: the server hands an entry to
// the subscription's consumer and the reply never reaches it, then the subscription's blocked read
// is killed on the node that serves its key. The subscription must hand the entry out, without a
// reclaim (off here), as it does on one server (test/stream.test.ts).

export interface CutTarget {
  /** A client that reaches the key wherever it is (the cluster client, the master's connection). */
  readonly data: Redis | Cluster;
  /** A connection to the node serving `key`, to list and kill its clients. */
  node(key: string): Promise<Redis>;
}

/** Kills the connections blocked in an XREADGROUP on `node`; answers how many. */
async function killBlockedReaders(node: Redis): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const list = (await node.client("LIST")) as string;
    const ids = list
      .split("\n")
      .filter((line) => line.includes("cmd=xreadgroup") && line.includes(" flags=b"))
      .map((line) => /\bid=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    if (ids.length > 0) {
      for (const id of ids) await node.client("KILL", "ID", id);
      return ids.length;
    }
    if (Date.now() > deadline) throw new Error(`no read blocked:\n${list}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function swallowedEntryRecovered(
  options: RedisBrokerOptions,
  target: CutTarget,
): Promise<void> {
  const broker = await new RedisBroker(options).connect();
  const key = uniqueName("swallowed");
  const node = await target.node(key);
  try {
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: 100 }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("swallowed") });
    // Handed to this consumer by the server; the reply never reaches it.
    await target.data.xreadgroup("GROUP", "g", sub.consumer, "COUNT", 10, "STREAMS", key, ">");
    const pending = async () => Number(((await target.data.xpending(key, "g")) as unknown[])[0]);
    expect(await pending()).toBe(1);
    const first = sub.next();
    expect(await killBlockedReaders(node)).toBeGreaterThan(0);
    const got = await Promise.race([
      first,
      new Promise<"never">((resolve) => setTimeout(() => resolve("never"), 10_000)),
    ]);
    if (got === "never") throw new Error("the swallowed entry never came after the cut");
    if (got.done) throw new Error("the subscription ended");
    const d = got.value;
    expect(text(d.payload)).toBe("swallowed");
    // The server's count: handed to this consumer twice.
    expect(d.redeliveryCount).toBe(2);
    expect(await d.ack()).toBe("ok");
    expect(await pending()).toBe(0);
    await sub.close();
  } finally {
    node.disconnect();
    await broker.shutdown();
  }
}
