import { describe, expect, it } from "vitest";
import type { ClosedBroker } from "../../src/broker/contract.js";
import {
  brokerMark,
  ConnectionBase,
  type HostedSubscription,
  type LinkChange,
  sourceMark,
} from "../../src/brokerEntry.js";
import {
  type AddressedSource,
  type ConnectionChange,
  type ConnectionListener,
  isRustStreamError,
  MemoryTopic,
} from "../../src/index.js";

class Stream implements AddressedSource {
  readonly [sourceMark] = "test";
  readonly copies = "addressed" as const;
  readonly name: string;
  readonly group: string | undefined;
  constructor(name: string, group?: string) {
    this.name = name;
    this.group = group;
  }
  get redeliveryAddress(): string {
    return this.name;
  }
}

/** What a test connection is made with: its log of take-backs and teardowns, and the base's options. */
interface TestSetup {
  readonly log?: string[];
  readonly takeBackWithinMs?: number;
  readonly onState?: ConnectionListener;
}

/** The smallest connection on the base: it logs its teardowns and reads through a group. */
class TestConnection extends ConnectionBase<Stream, ClosedBroker & { readonly own: string }> {
  readonly [brokerMark] = "test";
  teardowns = 0;
  readonly #group: string | undefined;
  readonly #log: string[];
  constructor(group: string | undefined, setup: TestSetup = {}) {
    const { log = [], takeBackWithinMs, onState } = setup;
    super(
      {
        label: "Test",
        accepts: "a name or a Stream",
        group: { noun: "group", option: "group", broker: "TestBroker", descriptor: "Stream" },
        ...(takeBackWithinMs === undefined ? {} : { takeBackWithinMs }),
      },
      onState,
    );
    this.#group = group;
    this.#log = log;
  }
  /** Stands for the broker's client seeing the server go and come back. */
  client(change: LinkChange): void {
    this.reportState(change);
  }
  source(name: string): Stream {
    return new Stream(name, this.groupOf(name, this.#group));
  }
  subscribe(source: string | Stream): { name: string; group: string } {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    return {
      name: descriptor.name,
      group: this.groupOf(descriptor.name, descriptor.group ?? this.#group),
    };
  }
  /** Stands for a subscribe whose server round trip ends after `during` ran. */
  async open<S extends HostedSubscription>(subscription: S, during: () => unknown): Promise<S> {
    await during();
    return this.adopt(subscription);
  }
  protected async teardown(): Promise<{ unflushed: number; own: string }> {
    this.teardowns++;
    this.#log.push("teardown");
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { unflushed: 2, own: "fact" };
  }
}

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return isRustStreamError(error) ? error.code : "not a RustStreamError";
  }
  return undefined;
}

describe("ConnectionBase", () => {
  it("shuts down once: concurrent and later calls share one teardown and one witness", async () => {
    const connection = new TestConnection("g");
    expect(connection.state).toBe("connected");
    const first = connection.shutdown();
    const second = connection.shutdown();
    expect(connection.state).toBe("closed");
    expect(connection.isClosed).toBe(true);
    const witness = await first;
    expect(await second).toBe(witness);
    expect(await connection.shutdown()).toBe(witness);
    expect(connection.teardowns).toBe(1);
  });

  it("passes on each change of state the client reports, once, and `closed` at shutdown", async () => {
    const heard: ConnectionChange[] = [];
    const connection = new TestConnection("g", { onState: (change) => heard.push(change) });
    connection.client({ state: "connected" });
    connection.client({ state: "reconnecting", reason: "connect ECONNREFUSED" });
    connection.client({ state: "reconnecting", reason: "connect ECONNREFUSED, again" });
    expect(connection.state).toBe("reconnecting");
    connection.client({ state: "connected" });
    connection.client({ state: "lost", reason: "WRONGPASS" });
    expect(connection.state).toBe("lost");
    const closing = connection.shutdown();
    expect(connection.state).toBe("closed");
    // What the client reports while it closes, and after, is no change of the connection's.
    connection.client({ state: "reconnecting", reason: "the socket closed" });
    await closing;
    await connection.shutdown();
    expect(connection.state).toBe("closed");
    expect(heard).toEqual([
      { state: "reconnecting", reason: "connect ECONNREFUSED" },
      { state: "connected" },
      { state: "lost", reason: "WRONGPASS" },
      { state: "closed" },
    ]);
  });

  it("fails every use after shutdown with `closed`, naming the broker and the fix", async () => {
    const connection = new TestConnection("g");
    expect(codeOf(() => connection.assertOpen())).toBeUndefined();
    await connection.shutdown();
    expect(codeOf(() => connection.subscribe("orders"))).toBe("closed");
    expect(() => connection.assertOpen()).toThrow(
      "this Test broker connection was used after shutdown(): connect again (broker.connect())",
    );
    expect(connection.closedError("request").message).toMatch(/^this Test broker request was used/);
  });

  it("refuses another broker's descriptor, and a value that is none, with foreign-value", () => {
    const connection = new TestConnection("g");
    expect(connection.subscribe(new Stream("orders"))).toEqual({ name: "orders", group: "g" });
    expect(codeOf(() => connection.subscribe(new MemoryTopic("orders") as never))).toBe(
      "foreign-value",
    );
    expect(() => connection.subscribe(new MemoryTopic("orders") as never)).toThrow(
      'the Test broker cannot subscribe to a descriptor of the "memory" broker: use a name or a Stream',
    );
    expect(codeOf(() => connection.subscribe(undefined as never))).toBe("foreign-value");
  });

  it("never makes up a group: a missing one names the three places to give it", () => {
    const connection = new TestConnection(undefined);
    expect(connection.subscribe(new Stream("orders", "own"))).toEqual({
      name: "orders",
      group: "own",
    });
    for (const attempt of [
      () => connection.source("orders"),
      () => connection.subscribe(new Stream("orders")),
    ]) {
      expect(codeOf(attempt)).toBe("invalid-argument");
      expect(attempt).toThrow(
        '"orders" has no group, and none is set: connect the broker through an app (its name is the group), give TestBroker a group option (shared by the replicas) or give the descriptor one (new Stream("orders", { group }))',
      );
    }
  });

  it("answers a subscription that finished opening while open", async () => {
    const connection = new TestConnection("g");
    const log: string[] = [];
    const subscription = recording(log);
    expect(await connection.open(subscription, () => undefined)).toBe(subscription);
    expect(log).toEqual([]);
  });

  it("takes back a subscription that finished opening after a shutdown, and fails with closed", async () => {
    const connection = new TestConnection("g");
    const log: string[] = [];
    const opened = connection.open(recording(log), () => connection.shutdown());
    await expect(opened).rejects.toThrow(
      "this Test broker connection was used after shutdown(): connect again (broker.connect())",
    );
    expect(log).toEqual(["revoke (closed)", "surrender"]);
  });

  it("takes back what it holds before the broker's teardown, and counts it in the witness", async () => {
    const log: string[] = [];
    const connection = new TestConnection("g", { log });
    await connection.open(recording(log, "a", 2), () => undefined);
    await connection.open(recording(log, "b", 3), () => undefined);
    const closed = await connection.shutdown();
    expect(log).toEqual([
      "a revoke (closed)",
      "b revoke (closed)",
      "a surrender",
      "b surrender",
      "teardown",
    ]);
    expect(closed).toEqual({
      [brokerMark]: "test",
      state: "closed",
      unflushed: 2,
      own: "fact",
      closedSubscriptions: 2,
      returnedDeliveries: 5,
    });
  });

  it("reports `closed` as the shutdown begins, before it takes back a subscription or tears down", async () => {
    const log: string[] = [];
    const onState: ConnectionListener = (change) => log.push(change.state);
    const connection = new TestConnection("g", { log, onState });
    await connection.open(recording(log, "a", 1), () => undefined);
    const closed = await connection.shutdown();
    expect(log).toEqual(["closed", "a revoke (closed)", "a surrender", "teardown"]);
    expect(closed).toMatchObject({ closedSubscriptions: 1, returnedDeliveries: 1 });
  });

  it("lets go of a subscription that closed itself: the shutdown neither takes it back nor counts it", async () => {
    const log: string[] = [];
    const connection = new TestConnection("g", { log });
    const closing = await connection.open(recording(log, "closing", 4), () => undefined);
    await connection.open(recording(log, "open", 1), () => undefined);
    connection.forget(closing);
    // One the connection never held changes nothing.
    connection.forget(recording(log, "stranger", 9));
    const closed = await connection.shutdown();
    expect(log).toEqual(["open revoke (closed)", "open surrender", "teardown"]);
    expect(closed).toMatchObject({ closedSubscriptions: 1, returnedDeliveries: 1 });
  });

  it("with takeBackWithinMs, a surrender that never ends does not hold the shutdown", async () => {
    const log: string[] = [];
    const connection = new TestConnection("g", { log, takeBackWithinMs: 20 });
    await connection.open(recording(log, "quick", 2), () => undefined);
    await connection.open(
      { revoke: () => undefined, surrender: () => new Promise<number>(() => {}) },
      () => undefined,
    );
    const closed = await connection.shutdown();
    expect(closed).toMatchObject({ closedSubscriptions: 2, returnedDeliveries: 2 });
    expect(log).toEqual(["quick revoke (closed)", "quick surrender", "teardown"]);
  });
});

function recording(log: string[], name?: string, held = 0): HostedSubscription {
  const prefix = name === undefined ? "" : `${name} `;
  return {
    revoke: (error) => {
      log.push(`${prefix}revoke (${error.code})`);
    },
    surrender: async () => {
      log.push(`${prefix}surrender`);
      return held;
    },
  };
}
