import { HeaderMap, type RawMessage } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import type { ConsumedRecord, LinkConsumer, ProducedRecord } from "../src/client/link.js";
import { partitionKey } from "../src/client/link.js";
import { InProcessCluster } from "../src/inProcess/cluster.js";
import { InProcessLink } from "../src/inProcess/inProcessLink.js";
import { Tracker } from "../src/topic/tracker.js";
import { type OutputCause, TransactionWindow } from "../src/topic/window.js";
import { TransactionLine } from "../src/transactions.js";

// The transactional window's staging, on the in-process stand-in's transactions: an output goes
// out with the transaction that commits its input's position, and never once its delivery's books
// closed (a rewind, a seek, a revocation) or once the delivery went back to be handled again.

const GROUP = "g";
const IN = { topic: "in", partition: 0 };
const IN_1 = { topic: "in", partition: 1 };

function setUp() {
  const cluster = new InProcessCluster();
  const link = new InProcessLink(cluster, new CountingCoordinator());
  const settings = { partitioner: "murmur2", compression: undefined, config: [] } as const;
  const line = new TransactionLine("t", link.transactionalProducer(settings));
  const consumer: LinkConsumer = link.consumer(
    {
      group: GROUP,
      topics: [IN.topic],
      commit: "transactional",
      start: undefined,
      assignment: undefined,
      config: [],
    },
    {
      assigned: async () => [],
      revoked: async () => {},
      records: () => {},
      failed: () => {},
    },
  );
  const published: RawMessage[] = [];
  const window = new TransactionWindow(
    {
      group: GROUP,
      consumer,
      rewind: async () => {},
      published: (raw) => published.push(raw),
      failed: (error) => {
        throw error;
      },
    },
    line,
  );
  const tracker = new Tracker();
  const key = partitionKey(IN);
  for (const tp of [IN, IN_1]) {
    tracker.reset(partitionKey(tp));
    window.started({ ...tp, offset: 0n });
  }
  /** A delivery of `offset` handed out under its partition's books of now. */
  const handOut = (offset: bigint, tp = IN): OutputCause => ({
    key: partitionKey(tp),
    book: tracker.delivered(partitionKey(tp), offset),
    offset,
  });
  /** Stages one output for `cause`. */
  const stage = (cause: OutputCause, value: string) => {
    const record: ProducedRecord = {
      topic: "out",
      partition: 0,
      key: undefined,
      value: bytes(value),
      headers: [],
    };
    const raw: RawMessage = {
      name: "out",
      payload: bytes(value),
      headers: new HeaderMap(),
      partitionKey: undefined,
    };
    window.stage(cause, record, raw);
  };
  /** Settles `cause` and tells the window where its partition's position moved. */
  const settle = (cause: OutputCause, tp = IN) => {
    const position = cause.book?.settle(cause.offset);
    if (position !== undefined) window.settled({ ...tp, offset: position });
  };
  const outputs = () =>
    cluster.read("out", 0, 0n, 100).records.map((r: ConsumedRecord) => text(r.value));
  const committed = (tp = IN) => cluster.group(GROUP).committed.get(partitionKey(tp));
  return { window, tracker, key, handOut, stage, settle, outputs, committed, published };
}

describe("transactional window", () => {
  it("commits an output with its input's position", async () => {
    const t = setUp();
    const first = t.handOut(0n);
    t.stage(first, "reply-0");
    t.settle(first);
    await t.window.flush();
    expect(t.outputs()).toEqual(["reply-0"]);
    expect(t.committed()).toBe(1n);
    expect(t.published.map((raw) => text(raw.payload))).toEqual(["reply-0"]);
  });

  it("drops what a delivery staged once its books closed (a seek or a rewind since)", async () => {
    const t = setUp();
    const stale = t.handOut(0n);
    t.stage(stale, "before-the-seek");
    // The partition sought back to 0: fresh books, the delivery's are closed.
    t.tracker.reset(t.key);
    t.stage(stale, "staged-after-the-seek");
    t.settle(stale);
    const again = t.handOut(0n);
    t.stage(again, "after-the-seek");
    t.settle(again);
    await t.window.flush();
    expect(t.outputs()).toEqual(["after-the-seek"]);
    expect(t.committed()).toBe(1n);
  });

  it("unstages only the outputs of the delivery that went back: its partition's books, its offset", async () => {
    const t = setUp();
    const first = t.handOut(0n);
    const second = t.handOut(1n);
    const otherPartition = t.handOut(0n, IN_1);
    t.stage(first, "first");
    t.stage(second, "second");
    t.stage(otherPartition, "other-partition");
    t.window.unstage(first);
    t.stage(first, "first-again");
    t.settle(first);
    t.settle(second);
    t.settle(otherPartition, IN_1);
    await t.window.flush();
    expect(t.outputs()).toEqual(["second", "other-partition", "first-again"]);
    expect(t.committed()).toBe(2n);
    expect(t.committed(IN_1)).toBe(1n);
  });
});
