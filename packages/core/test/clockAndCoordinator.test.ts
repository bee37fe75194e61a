import { describe, expect, it } from "vitest";
import { CountingCoordinator } from "../src/brokerEntry.js";
import { ManualClock } from "../src/index.js";

describe("ManualClock", () => {
  it("fires due timers in due order, ties in arming order, including ones armed while firing", () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push("b"));
    clock.setTimer(10, () => {
      fired.push("a");
      clock.setTimer(5, () => fired.push("a+5"));
    });
    clock.setTimer(20, () => fired.push("c"));
    const cancelled = clock.setTimer(15, () => fired.push("never"));
    cancelled.cancel();
    clock.advance(19);
    expect(fired).toEqual(["a", "a+5"]);
    expect(clock.now()).toBe(19);
    clock.advance(1);
    expect(fired).toEqual(["a", "a+5", "b", "c"]);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("CountingCoordinator", () => {
  it("resolves whenIdle once the balance returns to zero", async () => {
    const c = new CountingCoordinator();
    await c.whenIdle();
    c.enqueued(2);
    let idle = false;
    const waiting = c.whenIdle().then(() => {
      idle = true;
    });
    c.consumed();
    // A turn of the event loop runs every reaction an early resolve would have set off.
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    c.consumed();
    await waiting;
    expect(idle).toBe(true);
  });

  it("waits for no parked delivery, and for it again once it is unparked", async () => {
    const c = new CountingCoordinator();
    c.enqueued(2);
    c.consumed();
    let idle = false;
    const waiting = c.whenIdle().then(() => {
      idle = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    // Held by the runtime for a delayed retry copy: still counted, no longer waited for.
    c.park();
    await waiting;
    expect([c.outstanding, c.parked]).toEqual([0, 1]);
    // The delay is over: outstanding again until the transport releases it at the ack.
    c.unpark();
    expect(c.outstanding).toBe(1);
    c.consumed();
    expect(c.outstanding).toBe(0);
  });

  it("refuses an unpark with nothing parked", () => {
    expect(() => new CountingCoordinator().unpark()).toThrow(/once per park/);
  });

  it("refuses to release more than was counted", () => {
    expect(() => new CountingCoordinator().consumed()).toThrow(/once per delivery/);
  });
});
