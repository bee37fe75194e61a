import { bytes, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import type { ConsumedRecord, TopicPartition } from "../src/client/link.js";
import { InProcessCluster } from "../src/inProcess/cluster.js";

// The stand-in's transactions, held to what the server does for a read_committed reader: an open
// transaction's first record is the last stable offset (nothing at or past it is read), an aborted
// transaction's records and every marker take offsets that are never handed over, and readers move
// past them.

const record = (topic: string, value: string) => ({
  topic,
  partition: 0,
  key: undefined,
  value: bytes(value),
  headers: [],
});

const values = (records: readonly ConsumedRecord[]) => records.map((r) => text(r.value));

describe("in-process transactions", () => {
  it("an open transaction holds readers at its first record; its end writes a marker", () => {
    const cluster = new InProcessCluster();
    cluster.append(record("t", "plain-0"));
    const tx = cluster.begin();
    cluster.append(record("t", "tx-0"), tx);
    cluster.append(record("t", "plain-1"));
    expect(cluster.read("t", 0, 0n, 10)).toEqual({
      records: [expect.objectContaining({ offset: 0n })],
      next: 1n,
    });
    cluster.end(tx, "committed");
    const after = cluster.read("t", 0, 1n, 10);
    expect(values(after.records)).toEqual(["tx-0", "plain-1"]);
    // Three records and a marker.
    expect(after.next).toBe(4n);
    expect(cluster.watermarks("t", 0)).toEqual({ low: 0n, high: 4n });
  });

  it("an aborted transaction's records and its marker are skipped, and the position moves past them", () => {
    const cluster = new InProcessCluster();
    cluster.append(record("t", "before"));
    const tx = cluster.begin();
    cluster.append(record("t", "gone-0"), tx);
    cluster.append(record("t", "gone-1"), tx);
    cluster.end(tx, "aborted");
    expect(cluster.read("t", 0, 1n, 10)).toEqual({ records: [], next: 4n });
    cluster.append(record("t", "after"));
    const all = cluster.read("t", 0, 0n, 10);
    expect(values(all.records)).toEqual(["before", "after"]);
    expect(all.records.map((r) => r.offset)).toEqual([0n, 4n]);
    expect(cluster.readableOffsets("t", 0, 0n)).toEqual([0n, 4n]);
  });

  it("readers are told of a committed transaction's records, and of where an aborted one ended", () => {
    const cluster = new InProcessCluster();
    const told: Array<[TopicPartition, string | undefined]> = [];
    cluster.listen((tp, r) => told.push([tp, r === undefined ? undefined : text(r.value)]));
    const committed = cluster.begin();
    cluster.append(record("t", "c-0"), committed);
    expect(told, "nothing is readable before the commit").toEqual([]);
    cluster.end(committed, "committed");
    const abortedTx = cluster.begin();
    cluster.append(record("t", "a-0"), abortedTx);
    cluster.end(abortedTx, "aborted");
    expect(told).toEqual([
      [expect.objectContaining({ topic: "t", partition: 0 }), "c-0"],
      [{ topic: "t", partition: 0 }, undefined],
    ]);
  });

  it("a transaction that ended takes no more records and cannot end twice", () => {
    const cluster = new InProcessCluster();
    const tx = cluster.begin();
    cluster.append(record("t", "x"), tx);
    cluster.end(tx, "committed");
    expect(() => cluster.append(record("t", "late"), tx)).toThrow(/committed/);
    expect(() => cluster.end(tx, "aborted")).toThrow(/committed/);
  });
});
