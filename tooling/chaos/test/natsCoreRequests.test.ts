import { describe, expect, it } from "vitest";
import type { Handled } from "../src/checker.js";
import { RequestLedger } from "../src/scenarios/natsCoreRequests.js";

const h = (seq: number, attempt: number): Handled => ({ key: "a", seq, attempt });

/** Two messages: seq 0 sent once, seq 1 sent twice (its first reply lost), both answered. */
function ledger(): RequestLedger {
  const l = new RequestLedger();
  l.sent(0);
  l.answered({ key: "a", seq: 0 }, { k: "a", s: 0 });
  l.sent(1);
  l.failed("timeout");
  l.sent(1);
  l.answered({ key: "a", seq: 1 }, { k: "a", s: 1 });
  return l;
}

describe("the core NATS requests' verdict", () => {
  it("passes a message handled as often as it was sent, and a runtime copy after a handling", () => {
    const verdict = ledger().verdict(2, [h(0, 1), h(0, 2), h(1, 1), h(1, 1)]);
    expect(verdict.failures).toEqual([]);
    expect(verdict.notes[0]).toMatch(/^3 requests for 2 messages, 2 answered; .*1 timeouts/);
    expect(verdict.notes[1]).toMatch(/^1 handlings of the runtime's republished copies/);
  });

  it("fails a message handled more often than it was sent: a delivery core NATS never makes", () => {
    const verdict = ledger().verdict(2, [h(0, 1), h(0, 1), h(1, 1)]);
    expect(verdict.failures).toEqual([
      "1 messages handled more often than they were sent (seq 0: 2 for 1)",
    ]);
  });

  it("fails a runtime copy handled more often than the attempt before it", () => {
    const verdict = ledger().verdict(2, [h(0, 1), h(0, 2), h(0, 3), h(0, 3), h(1, 1)]);
    expect(verdict.failures).toEqual([
      "1 messages with more runtime copies handled than handlings before them",
    ]);
  });

  it("fails a reply that is not its own request's, and a request never answered", () => {
    const l = new RequestLedger();
    l.sent(0);
    l.answered({ key: "a", seq: 0 }, { k: "a", s: 7 });
    l.sent(1);
    l.unanswered(1);
    const verdict = l.verdict(2, [h(0, 1)]);
    expect(verdict.failures).toEqual([
      "1 requests never answered within 30 s (first: 1)",
      '1 replies not to their own request (seq 0 answered {"k":"a","s":7})',
    ]);
  });
});
