import { describe, expect, it } from "vitest";
import { PullSubscription } from "../src/brokerEntry.js";
import { type Delivery, isRustStreamError, RustStreamError } from "../src/index.js";

// The checks every broker's subscription gets from the base, on a bare subscription whose pull
// waits until the test hands it deliveries.

class Bare extends PullSubscription<Delivery> {
  readonly name = "bare";
  open = true;
  pulls: number[] = [];
  #wake: ((got: readonly Delivery[]) => void) | undefined;

  assertOpen(): void {
    if (!this.open) throw new RustStreamError("closed", "the connection was shut down");
  }
  protected pull(max: number): Promise<readonly Delivery[]> {
    this.pulls.push(max);
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }
  hand(got: readonly Delivery[]): void {
    this.#wake?.(got);
  }
  async close(): Promise<void> {
    if (this.markClosed()) this.hand([]);
  }
  revoke(error: RustStreamError): void {
    this.markRevoked(error);
  }
  check(position: unknown): void {
    this.seekTo(position, (v): v is number => typeof v === "number", "a bare position");
  }
}

const delivery = { name: "bare" } as unknown as Delivery;

async function codeOf(work: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    return isRustStreamError(error) ? error.code : String(error);
  }
  return "resolved";
}

describe("PullSubscription", () => {
  it("refuses a second pull while one waits, and serves the first", async () => {
    const s = new Bare();
    const first = s.next();
    expect(await codeOf(() => s.next())).toBe("invalid-argument");
    expect(await codeOf(() => s.nextBatch(3))).toBe("invalid-argument");
    s.hand([delivery]);
    expect(await first).toEqual({ done: false, value: delivery });
    // Once the first is answered, the next pull goes through.
    const again = s.nextBatch(5);
    s.hand([delivery, delivery]);
    expect(await again).toEqual([delivery, delivery]);
    expect(s.pulls).toEqual([1, 5]);
  });

  it("checks the batch size before anything else", async () => {
    const s = new Bare();
    expect(await codeOf(() => s.nextBatch(0))).toBe("invalid-argument");
    expect(s.pulls).toEqual([]);
  });

  it("answers done once closed, without pulling", async () => {
    const s = new Bare();
    const waiting = s.next();
    await s.close();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(await s.next()).toEqual({ done: true, value: undefined });
    expect(await s.nextBatch(2)).toEqual([]);
    expect(s.pulls).toEqual([1]);
  });

  it("rejects with the connection's closed error, and with the revoke error once revoked", async () => {
    const s = new Bare();
    s.revoke(new RustStreamError("closed", "revoked at shutdown"));
    expect(await codeOf(() => s.next())).toBe("closed");
    const t = new Bare();
    t.open = false;
    expect(await codeOf(() => t.nextBatch(1))).toBe("closed");
  });

  it("starts a seek with the connection check and refuses a position of another kind", async () => {
    const s = new Bare();
    expect(await codeOf(() => s.check("3"))).toBe("foreign-value");
    expect(await codeOf(() => s.check(3))).toBe("resolved");
    s.open = false;
    expect(await codeOf(() => s.check(3))).toBe("closed");
  });

  it("is iterable, and leaving the loop early closes it", async () => {
    const s = new Bare();
    const loop = (async () => {
      for await (const d of s) {
        expect(d).toBe(delivery);
        break;
      }
    })();
    await Promise.resolve();
    await Promise.resolve();
    s.hand([delivery]);
    await loop;
    expect(await s.next()).toEqual({ done: true, value: undefined });
  });
});
