import { describe, expect, it } from "vitest";
import { FirstAssignment } from "../src/client/assignmentWait.js";

// The bounded wait both server engines' start() ends with, on its own: it ends once the engine
// reports the first assignment, whether that came before or after start() began waiting, and a
// group that assigns nothing fails the start with an error naming the group, its topics and what
// to check.

describe("the wait for the first assignment", () => {
  it("resolves when the assignment was applied before the wait began", async () => {
    const first = new FirstAssignment("g", ["t"]);
    first.applied();
    await expect(first.wait(60_000)).resolves.toBeUndefined();
  });

  it("resolves when the assignment is applied while waiting, and a second report changes nothing", async () => {
    const first = new FirstAssignment("g", ["t"]);
    const waiting = first.wait(60_000);
    first.applied();
    first.applied();
    await expect(waiting).resolves.toBeUndefined();
  });

  it("fails without an assignment, naming the group, the topics and what to check", async () => {
    const first = new FirstAssignment("orders-group", ["orders", "refunds"]);
    const failure = await first.wait(10).then(
      () => new Error("the wait resolved without an assignment"),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    const message = (failure as Error).message;
    expect(message).toContain('consumer group "orders-group"');
    expect(message).toContain("orders, refunds");
    expect(message).toContain("within 10 ms");
    expect(message).toContain("brokers are reachable");
    expect(message).toContain("topics exist");
  });
});
