import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { PostgresBroker, PostgresQueue } from "../src/index.js";

// A keyed backlog drained by one subscription, on the real server: 3,000 rows over 50 keys, the
// heads of ten keys retried with a delay on their first delivery. Every row is handled once, each
// key in order, and claims take a key's head with the rows behind it (the claim before this took
// one row per key: no claim of it held two rows of a key, and it needed at least 60 claims).

const keys = 50;
const perKey = 60;
const retried = 10;
const retryMs = 1500;
/** More than the keys: one row per key could never fill a claim. */
const claim = 100;

describe("per-key order over a backlog", () => {
  it("a subscription drains a keyed backlog in order per key, claiming several rows of a key at once", async () => {
    const url = requireEnv("POSTGRES_URL");
    const queue = uniqueName("backlog");
    const connected = await new PostgresBroker({
      url,
      table: "key_order_backlog",
      ensureSchema: true,
    }).connect();
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      // One statement, rows in turn over the keys: a key's rows are spread over the backlog.
      await publisher.transaction(async (tx) => {
        for (let seq = 0; seq < perKey; seq++) {
          for (let k = 0; k < keys; k++) {
            await tx.publish({
              name: queue,
              payload: new TextEncoder().encode(JSON.stringify({ k, seq })),
              partitionKey: `k${k}`,
            });
          }
        }
      });
      const subscription = await connected.subscribe(new PostgresQueue(queue, { claim }));
      const handled = new Map<number, number[]>();
      let done = 0;
      let claims = 0;
      let mostOfOneKey = 0;
      const retriedAttempts: number[] = [];
      const deadline = Date.now() + 25_000;
      while (done < keys * perKey) {
        if (Date.now() > deadline) throw new Error(`drained ${done} of ${keys * perKey} in time`);
        const batch = await subscription.nextBatch(claim);
        claims += 1;
        const ofKey = new Map<number, number>();
        // A key whose head is retried in this claim: the rows behind it, claimed with it, go back.
        const waiting = new Set<number>();
        const settles: unknown[] = [];
        for (const delivery of batch) {
          const { k, seq } = JSON.parse(new TextDecoder().decode(delivery.payload)) as {
            k: number;
            seq: number;
          };
          ofKey.set(k, (ofKey.get(k) ?? 0) + 1);
          if (seq === 0 && k < retried) retriedAttempts.push(delivery.redeliveryCount);
          if (seq === 0 && k < retried && delivery.redeliveryCount === 1) {
            waiting.add(k);
            settles.push(delivery.nackAfter(retryMs));
          } else if (waiting.has(k)) {
            settles.push(delivery.nack({ requeue: true }));
          } else {
            handled.set(k, [...(handled.get(k) ?? []), seq]);
            done += 1;
            settles.push(delivery.ack());
          }
        }
        mostOfOneKey = Math.max(mostOfOneKey, ...ofKey.values());
        await Promise.all(settles);
      }
      await subscription.close();
      const inOrder = [...Array(perKey).keys()];
      for (let k = 0; k < keys; k++) expect(handled.get(k), `key ${k}`).toEqual(inOrder);
      // Each retried head: its first delivery, then the one after its delay.
      expect(retriedAttempts.filter((a) => a === 1)).toHaveLength(retried);
      expect(retriedAttempts.filter((a) => a === 2)).toHaveLength(retried);
      // Several rows of one key in a claim, so fewer claims than one row per key needs at least.
      expect(mostOfOneKey).toBeGreaterThan(1);
      expect(claims).toBeLessThan(perKey);
    } finally {
      await connected.shutdown();
    }
  });
});
