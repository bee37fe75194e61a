import { describe, expect, it } from "vitest";
import { RdkafkaConsumer } from "../src/client/librdkafka/consumer.js";
import type { RdConsumer, RdError, RdProducer } from "../src/client/librdkafka/rdkafka.js";
import {
  HUNG_GRACE_MS,
  RdkafkaTransactionalProducer,
} from "../src/client/librdkafka/transactions.js";
import type { ConsumerHooks } from "../src/client/link.js";

// The librdkafka transactional producer when librdkafka does not answer: its
// sendOffsetsToTransaction can hang for good when the group's coordinator dies (librdkafka issues
// 5456 and 5511), which the chaos suite's `kafka-transactional` met after a leader-kill; the
// window's transaction never ended, and with it the revocation waiting for it and the whole group.
// Stand-in producers (no cluster): the one under test is the engine's own class.

type Callback = (error: RdError | null | undefined) => void;

/** A stand-in librdkafka producer; `hang` names the calls that never call back. */
class FakeProducer {
  readonly calls: string[] = [];
  readonly held: Callback[] = [];
  disconnected = false;
  constructor(
    readonly hang: ReadonlySet<string>,
    readonly fail: ReadonlyMap<string, RdError> = new Map(),
  ) {}
  #answer(name: string, cb: Callback): void {
    this.calls.push(name);
    if (this.hang.has(name)) {
      this.held.push(cb);
      return;
    }
    const error = this.fail.get(name);
    setImmediate(() => cb(error ?? null));
  }
  setPollInBackground(): void {}
  on(): void {}
  initTransactions(_ms: number, cb: Callback): void {
    this.#answer("initTransactions", cb);
  }
  beginTransaction(cb: Callback): void {
    this.#answer("beginTransaction", cb);
  }
  sendOffsetsToTransaction(_o: unknown, _c: unknown, _ms: number, cb: Callback): void {
    this.#answer("sendOffsetsToTransaction", cb);
  }
  commitTransaction(_ms: number, cb: Callback): void {
    this.#answer("commitTransaction", cb);
  }
  abortTransaction(_ms: number, cb: Callback): void {
    this.#answer("abortTransaction", cb);
  }
  disconnect(cb: Callback): void {
    this.disconnected = true;
    setImmediate(() => cb(null));
  }
}

const hooks: ConsumerHooks = {
  assigned: async () => [],
  revoked: async () => {},
  records: () => {},
  failed: () => {},
};

/** A member whose positions a transaction commits: only its client (the group metadata) is used. */
const member = new RdkafkaConsumer(() => ({}) as unknown as RdConsumer, "g", ["in"], hooks, true);
const offsets = {
  group: "g",
  consumer: member,
  offsets: [{ topic: "in", partition: 0, offset: 5n }],
};

function rdError(code: number, message: string, fatal = false): RdError {
  return Object.assign(new Error(message), { code, isFatal: fatal });
}

const TIMEOUT_MS = 200;

describe("librdkafka transactional producer", () => {
  it("a sendOffsetsToTransaction that never answers: the transaction fails, the next runs on a fresh producer", async () => {
    const made: FakeProducer[] = [];
    const plans = [new Set(["sendOffsetsToTransaction"]), new Set<string>()];
    const connect = async () => {
      const producer = new FakeProducer(plans[made.length] ?? new Set());
      made.push(producer);
      return producer as unknown as RdProducer;
    };
    const producer = await RdkafkaTransactionalProducer.open(connect, TIMEOUT_MS);

    const started = Date.now();
    await expect(producer.commit([], offsets)).rejects.toThrow(/did not answer/);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS + HUNG_GRACE_MS - 50);
    expect(waited).toBeLessThan(TIMEOUT_MS + HUNG_GRACE_MS + 3_000);
    // No abort on the stuck producer (librdkafka refuses a call while one runs), and no close yet.
    expect(made[0]!.calls).toEqual([
      "initTransactions",
      "beginTransaction",
      "sendOffsetsToTransaction",
    ]);
    expect(made[0]!.disconnected).toBe(false);

    await producer.commit([], offsets);
    expect(made).toHaveLength(2);
    expect(made[1]!.calls).toEqual([
      "initTransactions",
      "beginTransaction",
      "sendOffsetsToTransaction",
      "commitTransaction",
    ]);

    // The stuck call returns at last (fenced): only then is its producer closed.
    made[0]!.held[0]!(rdError(-144, "fenced", true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(made[0]!.disconnected).toBe(true);
    await producer.close();
  }, 30_000);

  it("an abort that times out: the next transaction runs on a fresh producer instead of failing for good", async () => {
    const made: FakeProducer[] = [];
    const failing = new Map([
      ["commitTransaction", rdError(-185, "Local: Timed out")],
      ["abortTransaction", rdError(-185, "Local: Timed out")],
    ]);
    const connect = async () => {
      const producer = new FakeProducer(new Set(), made.length === 0 ? failing : new Map());
      made.push(producer);
      return producer as unknown as RdProducer;
    };
    const producer = await RdkafkaTransactionalProducer.open(connect, TIMEOUT_MS);
    await expect(producer.commit([], offsets)).rejects.toThrow(/Timed out/);
    await producer.commit([], offsets);
    expect(made).toHaveLength(2);
    expect(made[1]!.calls.at(-1)).toBe("commitTransaction");
    await producer.close();
  });

  it("an abort refused as fatal (fenced): the id stays unusable", async () => {
    const failing = new Map([
      ["commitTransaction", rdError(-185, "Local: Timed out")],
      ["abortTransaction", rdError(-144, "fenced", true)],
    ]);
    let opened = 0;
    const connect = async () => {
      opened++;
      return new FakeProducer(new Set(), failing) as unknown as RdProducer;
    };
    const producer = await RdkafkaTransactionalProducer.open(connect, TIMEOUT_MS);
    await expect(producer.commit([], offsets)).rejects.toThrow(/Timed out/);
    await expect(producer.commit([], offsets)).rejects.toThrow(/fenced/);
    expect(opened).toBe(1);
  });
});
