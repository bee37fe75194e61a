import { describe, expect, it } from "vitest";
import { DeliveryBase } from "../src/brokerEntry.js";
import {
  HeaderMap,
  isRustStreamError,
  type Position,
  type ReadonlyHeaderMap,
  type SettleResult,
} from "../src/index.js";

const position: Position = { broker: "test", toString: () => "0" };

class TestDelivery extends DeliveryBase {
  readonly name = "t";
  readonly payload = new Uint8Array();
  readonly headers: ReadonlyHeaderMap = new HeaderMap();
  readonly partitionKey = undefined;
  readonly redeliveryCount = 1;
  readonly position = position;
  constructor(
    readonly answers: {
      ack?: () => SettleResult;
      nack?: () => SettleResult;
      nackAfter?: () => SettleResult;
    },
  ) {
    super();
  }
  protected settleAck(): SettleResult {
    return this.answers.ack?.() ?? "ok";
  }
  protected settleNack(): SettleResult {
    return this.answers.nack?.() ?? "ok";
  }
  protected override settleNackAfter(): SettleResult {
    return this.answers.nackAfter?.() ?? "unsupported";
  }
}

describe("DeliveryBase", () => {
  it("throws on a second settle, naming the first", () => {
    const d = new TestDelivery({});
    expect(d.ack()).toBe("ok");
    expect(d.settled).toBe(true);
    let error: unknown;
    try {
      d.nack({ requeue: true });
    } catch (e) {
      error = e;
    }
    expect(isRustStreamError(error, "already-settled")).toBe(true);
    expect(String(error)).toMatch(/already settled with ack\(\)/);
    expect(String(error)).toMatch(/nack\(\{ requeue: true \}\) on a delivery/);
  });

  it("names each verb and its delay in the second-settle error", () => {
    const dropped = new TestDelivery({});
    dropped.nack({ requeue: false });
    expect(() => dropped.nackAfter(250)).toThrow(
      /nackAfter\(250\) on a delivery .* already settled with nack\(\{ requeue: false \}\)/,
    );
    const delayed = new TestDelivery({ nackAfter: () => "ok" });
    delayed.nackAfter(40);
    expect(() => delayed.ack()).toThrow(
      /ack\(\) on a delivery .* already settled with nackAfter\(40\)/,
    );
  });

  it("leaves the delivery open after an unsupported answer", async () => {
    const d = new TestDelivery({ nack: () => "unsupported" });
    expect(d.nackAfter(10)).toBe("unsupported");
    expect(d.nack({ requeue: true })).toBe("unsupported");
    expect(d.settled).toBe(false);
    expect(await d.ack()).toBe("ok");
  });

  it("refuses a second settle while the first is in flight", async () => {
    let finish: (a: "ok") => void = () => {};
    const d = new TestDelivery({
      ack: () =>
        new Promise((resolve) => {
          finish = resolve;
        }),
    });
    const first = d.ack();
    expect(() => d.ack()).toThrow(/already settled/);
    finish("ok");
    expect(await first).toBe("ok");
    expect(d.settled).toBe(true);
  });

  it("turns a broker's synchronous throw into a rejection", async () => {
    const d = new TestDelivery({
      ack: () => {
        throw new Error("connection reset");
      },
    });
    await expect(d.ack()).rejects.toThrow("connection reset");
    expect(d.settled).toBe(true);
  });

  it("refuses a negative delay", () => {
    expect(() => new TestDelivery({}).nackAfter(-1)).toThrow(/0 or more/);
  });
});
