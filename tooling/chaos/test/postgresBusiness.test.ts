import { describe, expect, it } from "vitest";
import {
  type BusinessState,
  businessOutputs,
  businessVerdict,
} from "../src/scenarios/postgresBusiness.js";

/** Rows 1-3 of seqs 0-2, all acked, each with its one business row. */
const whole = (): BusinessState => ({
  rows: new Map([
    ["1", { k: "a", seq: 0, done: true }],
    ["2", { k: "b", seq: 1, done: true }],
    ["3", { k: "a", seq: 2, done: true }],
  ]),
  business: [
    { id: "10", rowId: "1", k: "a", seq: 0 },
    { id: "11", rowId: "2", k: "b", seq: 1 },
    { id: "12", rowId: "3", k: "a", seq: 2 },
  ],
});

describe("a transactional queue's business rows", () => {
  it("pass when each acked row has its one business row", () => {
    const verdict = businessVerdict(whole());
    expect(verdict.failures).toEqual([]);
    expect(verdict.notes[0]).toContain("acked 3, not acked 0; business rows 3");
    expect(businessOutputs(whole())).toEqual([
      { key: "a", seq: 0, at: 10 },
      { key: "b", seq: 1, at: 11 },
      { key: "a", seq: 2, at: 12 },
    ]);
  });

  it("fail on a business row whose row was not acked", () => {
    const state = whole();
    const rows = new Map(state.rows);
    rows.set("2", { k: "b", seq: 1, done: false });
    const { failures } = businessVerdict({ ...state, rows });
    expect(failures).toEqual(["1 business rows of rows not acked (row ids: 2)"]);
  });

  it("fail on an acked row without its business row", () => {
    const state = whole();
    const { failures } = businessVerdict({ ...state, business: state.business.slice(1) });
    expect(failures).toEqual(["1 acked rows without their business row (row ids: 1)"]);
  });

  it("fail on a business row committed twice, and show it twice in the outputs", () => {
    const state = whole();
    const business = [...state.business, { id: "13", rowId: "3", k: "a", seq: 2 }];
    expect(businessVerdict({ ...state, business }).failures).toEqual([
      "1 rows whose business row was committed twice (3)",
    ]);
    expect(businessOutputs({ ...state, business }).filter((o) => o.seq === 2)).toHaveLength(2);
  });

  it("fail on a business row of another message than its row's", () => {
    const state = whole();
    const business = state.business.map((b) => (b.rowId === "2" ? { ...b, seq: 7 } : b));
    expect(businessVerdict({ ...state, business }).failures).toEqual([
      "1 business rows not of their row's message (row ids: 2)",
    ]);
  });

  it("count a message published twice once in the outputs, each of its rows in the per-row check", () => {
    const state = whole();
    const rows = new Map(state.rows);
    rows.set("4", { k: "b", seq: 1, done: true });
    const business = [...state.business, { id: "14", rowId: "4", k: "b", seq: 1 }];
    const verdict = businessVerdict({ rows, business });
    expect(verdict.failures).toEqual([]);
    expect(verdict.notes[0]).toContain("queue rows 4 (1 published twice)");
    expect(businessOutputs({ rows, business }).filter((o) => o.seq === 1)).toEqual([
      { key: "b", seq: 1, at: 11 },
    ]);
  });
});
