import { describe, expect, it } from "vitest";
import { Arrivals, PullSubscription } from "../../src/brokerEntry.js";
import { type Delivery, RustStreamError } from "../../src/index.js";

// The queue every push-fed subscription pulls from, and the base's wait on it: an arrival or a
// wake-up ends the wait, a revoke's wake-up throws its error.

/** Whether `promise` settles before everything already queued on the event loop has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

class Pushed extends PullSubscription<Delivery> {
  readonly name = "pushed";
  readonly waiting = new Arrivals<Delivery>();
  assertOpen(): void {}
  protected async pull(max: number): Promise<readonly Delivery[]> {
    if (this.waiting.length === 0) await this.arrivalOn(this.waiting);
    return this.waiting.take(max);
  }
  async close(): Promise<void> {
    this.markClosed();
    this.waiting.wake();
  }
  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.waiting.wake();
  }
}

const one = { name: "pushed" } as unknown as Delivery;
const two = { name: "pushed", two: true } as unknown as Delivery;

describe("Arrivals", () => {
  it("an arrival ends the wait; what waited is taken oldest first, at most max", async () => {
    const arrivals = new Arrivals<number>();
    const wait = arrivals.arrival();
    expect(arrivals.awaited).toBe(true);
    expect(await settled(wait)).toBe(false);
    arrivals.push(1);
    arrivals.push(2);
    arrivals.push(3);
    expect(await settled(wait)).toBe(true);
    expect(arrivals.awaited).toBe(false);
    expect(arrivals.take(2)).toEqual([1, 2]);
    expect(arrivals.length).toBe(1);
  });

  it("answers at once when something waits already", async () => {
    const arrivals = new Arrivals<number>();
    arrivals.push(1);
    expect(await settled(arrivals.arrival())).toBe(true);
    expect(arrivals.awaited).toBe(false);
  });

  it("a wake-up ends the wait with nothing; clear takes everything and wakes", async () => {
    const arrivals = new Arrivals<number>();
    const woken = arrivals.arrival();
    arrivals.wake();
    expect(await settled(woken)).toBe(true);
    expect(arrivals.take(5)).toEqual([]);
    arrivals.push(1);
    arrivals.push(2);
    expect(arrivals.clear()).toEqual([1, 2]);
    expect(arrivals.length).toBe(0);
    const cleared = arrivals.arrival();
    arrivals.clear();
    expect(await settled(cleared)).toBe(true);
  });
});

describe("PullSubscription.arrivalOn", () => {
  it("a pull waits for a push, and takes what arrived", async () => {
    const sub = new Pushed();
    const next = sub.nextBatch(5);
    expect(await settled(next)).toBe(false);
    sub.waiting.push(one);
    sub.waiting.push(two);
    expect(await next).toEqual([one, two]);
  });

  it("a close wakes the waiting pull, which ends", async () => {
    const sub = new Pushed();
    const next = sub.next();
    await sub.close();
    expect(await next).toEqual({ done: true, value: undefined });
  });

  it("a revoke wakes the waiting pull, which throws the revoke's error", async () => {
    const sub = new Pushed();
    const next = sub.next();
    sub.revoke(new RustStreamError("closed", "the connection was shut down"));
    await expect(next).rejects.toMatchObject({ code: "closed" });
  });
});
