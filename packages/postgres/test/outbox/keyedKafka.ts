import { setTimeout as sleep } from "node:timers/promises";
import type { BatchSubscription, Delivery, ReadonlyHeaderMap } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import type pg from "pg";
import { expect } from "vitest";
import { type PostgresOutbox, postgresHeaderNames } from "../../src/index.js";
import { inTransaction } from "./support.js";

// What the outbox's Kafka tests share: messages committed over several partition keys, a topic
// read back from its start, and the check that it holds each committed message, in order per key,
// with copies only where a relay published a message and died (or lost its lease) before marking it.

/** A message as the test committed it, and as it comes back: its key, its place in the key, its id. */
export interface Keyed {
  readonly key: string;
  readonly seq: number;
  readonly id: string;
}

/** A message read back from the topic, with its headers (the outbox id among them). */
export interface Received extends Keyed {
  readonly headers: ReadonlyHeaderMap;
}

/**
 * Commits `perKey` transactions, each writing one message for every key (`k0`, `k1`, ...) to
 * `topic` through `label`, payload the message's place in its key (counted from `from`, default
 * 0); and, between them, one transaction per `rolledBackEvery` rolled back. Resolves with the
 * committed messages.
 */
export async function commitKeyed(
  url: string,
  outbox: PostgresOutbox,
  to: { readonly label: string; readonly topic: string },
  shape: {
    readonly keys: number;
    readonly perKey: number;
    readonly rolledBackEvery: number;
    readonly from?: number;
  },
): Promise<Keyed[]> {
  const committed: Keyed[] = [];
  const from = shape.from ?? 0;
  for (let seq = from; seq < from + shape.perKey; seq++) {
    const written: Keyed[] = [];
    await inTransaction(url, async (tx) => {
      for (let k = 0; k < shape.keys; k++) {
        const key = `k${k}`;
        const id = await outbox.publish(
          tx,
          { broker: to.label, name: to.topic },
          { payload: bytes(String(seq)), partitionKey: key },
        );
        written.push({ key, seq, id });
      }
    });
    committed.push(...written);
    if (seq % shape.rolledBackEvery === 0) {
      await inTransaction(
        url,
        async (tx) => {
          for (let k = 0; k < shape.keys; k++) {
            await outbox.publish(
              tx,
              { broker: to.label, name: to.topic },
              { payload: bytes(`rolled-back ${seq}`), partitionKey: `k${k}` },
            );
          }
        },
        true,
      );
    }
  }
  return committed;
}

/** A reader of `topic` from its first offset, in a group of its own; the topic made with 4 partitions. */
export async function topicReader(brokers: string, topic: string) {
  const kafka = await new KafkaBroker({ brokers }).connect();
  const subscription = await kafka.subscribe(
    new KafkaTopic(topic, {
      group: uniqueName("outbox-reader"),
      start: "earliest",
      create: { partitions: 4 },
    }),
  );
  return {
    /** Reads (acking each) until every one of `expected` came at least once, within `ms`. */
    readAll: (expected: readonly Keyed[], ms: number): Promise<Received[]> =>
      readAll(subscription, expected, ms),
    close: async () => {
      await subscription.close();
      await kafka.shutdown();
    },
  };
}

async function readAll(
  subscription: BatchSubscription<Delivery>,
  expected: readonly Keyed[],
  ms: number,
): Promise<Received[]> {
  const missing = new Set(expected.map((m) => m.id));
  const got: Received[] = [];
  const deadline = Date.now() + ms;
  while (missing.size > 0) {
    if (Date.now() > deadline) {
      throw new Error(
        `${missing.size} of ${expected.length} committed messages not on the topic after ${ms} ms`,
      );
    }
    // The wait for a batch is bounded too: a topic short of a message must fail here, not hang.
    const left = Math.max(deadline - Date.now(), 1);
    const bound = new AbortController();
    const batch = await Promise.race([
      subscription.nextBatch(500),
      sleep(left, [] as Delivery[], { signal: bound.signal }).catch(() => [] as Delivery[]),
    ]).finally(() => bound.abort());
    for (const delivery of batch) {
      const id = delivery.headers.getString(postgresHeaderNames.outboxId) ?? "";
      const key = delivery.partitionKey === undefined ? "" : text(delivery.partitionKey);
      got.push({ key, seq: Number(text(delivery.payload)), id, headers: delivery.headers });
      missing.delete(id);
      await delivery.ack();
    }
  }
  return got;
}

/**
 * Checks what the topic holds against what was committed: no message of a rolled-back transaction
 * (its payload is not a number), each key's messages in order once a copy that follows its original
 * is dropped, every copy carrying its original's id. Resolves with the number of copies.
 */
export function checkKeyedOrder(got: readonly Keyed[], committed: readonly Keyed[]): number {
  expect(got.filter((m) => Number.isNaN(m.seq))).toEqual([]);
  const idOf = new Map(committed.map((m) => [`${m.key}/${m.seq}`, m.id]));
  let copies = 0;
  const byKey = new Map<string, Keyed[]>();
  for (const m of got) {
    expect(m.id).toBe(idOf.get(`${m.key}/${m.seq}`));
    const seen = byKey.get(m.key) ?? [];
    const last = seen.at(-1);
    if (last !== undefined && last.seq === m.seq) copies++;
    else seen.push(m);
    byKey.set(m.key, seen);
  }
  for (const [key, seen] of byKey) {
    const wanted = committed.filter((m) => m.key === key).map((m) => m.seq);
    expect(
      seen.map((m) => m.seq),
      `the messages of ${key}, in the topic's order`,
    ).toEqual(wanted);
  }
  return copies;
}

/** The outbox rows of `label` not yet marked sent (the relays delete a row once it is sent). */
export async function unsent(sql: pg.ClientBase, table: string, label: string): Promise<number> {
  const { rows } = await sql.query(
    `SELECT count(*)::int AS n FROM ${table}_outbox WHERE queue = $1`,
    [label],
  );
  return (rows[0] as { n: number }).n;
}
