import { describe, expect, it } from "vitest";
import {
  absence,
  type Capabilities,
  checkCapabilities,
  has,
  notBuilt,
  skippedName,
} from "../src/conformance/capabilities.js";
import { runScenarios, type Scenario } from "../src/conformance/scenario.js";
import { memoryTopicCapabilities } from "./memoryCapabilities.js";

// The two kinds of absence a declaration holds, and the names the closing tally counts them by.

const declared: Capabilities = {
  ...memoryTopicCapabilities,
  requeue: false,
  delayedRequeue: false,
  transactions: notBuilt("no transaction coordinator yet"),
  request: notBuilt("no reply inbox yet"),
};

describe("a declaration's two kinds of absence", () => {
  it("false is what the broker cannot do, named in the skip", () => {
    const why = absence(["ack", "requeue", "delayedRequeue"], declared);
    expect(why).toEqual({ kind: "cannot", what: "requeue, delayedRequeue" });
    expect(skippedName("a requeued delivery comes back", why!)).toBe(
      "a requeued delivery comes back (skipped, the broker cannot: requeue, delayedRequeue)",
    );
  });

  it("notBuilt is owed work, named with its reason, and wins over cannot", () => {
    const why = absence(["requeue", "transactions", "request"], declared);
    expect(why).toEqual({
      kind: "notBuilt",
      what: "transactions (no transaction coordinator yet), request (no reply inbox yet)",
    });
    expect(skippedName("commits", why!)).toBe(
      "commits (skipped, not built yet: transactions (no transaction coordinator yet), request (no reply inbox yet))",
    );
  });

  it("a scenario whose needs are all declared runs", () => {
    expect(absence(["ack", "seek"], declared)).toBeUndefined();
    expect(absence(undefined, declared)).toBeUndefined();
  });

  it("only true counts as having a capability", () => {
    expect(has(declared, "ack")).toBe(true);
    expect(has(declared, "requeue")).toBe(false);
    expect(has(declared, "transactions")).toBe(false);
  });

  it("runScenarios reports the kind of each skip and runs the rest", async () => {
    const ran: string[] = [];
    const scenario = (name: string, needs: Scenario<void>["needs"]): Scenario<void> => ({
      name,
      ...(needs === undefined ? {} : { needs }),
      run: async () => void ran.push(name),
    });
    const results = await runScenarios(
      [
        scenario("plain", undefined),
        scenario("requeues", ["requeue"]),
        scenario("commits", ["transactions"]),
      ],
      undefined,
      declared,
    );
    expect(ran).toEqual(["plain"]);
    expect(results.map((r) => [r.name, r.skipped?.kind])).toEqual([
      ["plain", undefined],
      ["requeues", "cannot"],
      ["commits", "notBuilt"],
    ]);
  });

  it("notBuilt needs a reason", () => {
    expect(() => notBuilt("  ")).toThrow("notBuilt(reason) needs a reason");
  });

  it("a declaration that is neither true, false nor notBuilt is refused, naming the fix", () => {
    const bad = { ...memoryTopicCapabilities, seek: "later" } as unknown;
    expect(() => checkCapabilities(bad)).toThrow(
      /capabilities\.seek is later: .*true, false \(the broker cannot\) or notBuilt\(reason\)/,
    );
    expect(() => checkCapabilities(undefined)).toThrow("conformance factories need `capabilities`");
    const { durable: _left, ...partial } = memoryTopicCapabilities;
    expect(() => checkCapabilities(partial)).toThrow("capabilities.durable is undefined");
    expect(() => checkCapabilities({ ...memoryTopicCapabilities, backlog: "all" })).toThrow(
      "capabilities.backlog is all",
    );
    expect(() => checkCapabilities(declared)).not.toThrow();
  });
});
