import { describe, expect, it } from "vitest";
import { type LinkChange, LinkStates } from "../../src/brokerEntry.js";

function following(states: LinkStates): LinkChange[] {
  const heard: LinkChange[] = [];
  states.follow((change) => heard.push(change));
  return heard;
}

describe("LinkStates", () => {
  it("is the worst of its links, heard only when that changes, with the first such link's reason", () => {
    const states = new LinkStates();
    const heard = following(states);
    const main = {};
    const reader = {};
    states.report(main, { state: "connected" });
    expect(heard).toEqual([]);
    states.report(reader, { state: "reconnecting", reason: "reader: ECONNREFUSED" });
    states.report(main, { state: "reconnecting", reason: "main: ECONNREFUSED" });
    states.report(reader, { state: "reconnecting", reason: "reader: still refused" });
    expect(states.current).toEqual({ state: "reconnecting", reason: "reader: still refused" });
    states.report(main, { state: "lost", reason: "main: WRONGPASS" });
    // One link back is not the connection back while another is away.
    states.report(main, { state: "connected" });
    expect(states.current).toEqual({ state: "reconnecting", reason: "reader: still refused" });
    states.report(reader, { state: "connected" });
    expect(heard).toEqual([
      { state: "reconnecting", reason: "reader: ECONNREFUSED" },
      { state: "lost", reason: "main: WRONGPASS" },
      { state: "reconnecting", reason: "reader: still refused" },
      { state: "connected" },
    ]);
  });

  it("forgets a link closed on purpose, and tells a follower that comes late where it is", () => {
    const states = new LinkStates();
    const consumer = {};
    states.report(consumer, { state: "reconnecting", reason: "all brokers down" });
    const heard = following(states);
    expect(heard).toEqual([{ state: "reconnecting", reason: "all brokers down" }]);
    states.forget(consumer);
    states.forget(consumer);
    expect(heard).toEqual([
      { state: "reconnecting", reason: "all brokers down" },
      { state: "connected" },
    ]);
    expect(() => states.follow(() => {})).toThrow("LinkStates.follow was called twice");
  });
});
