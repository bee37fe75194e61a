import { describe, expect, it } from "vitest";
import { takeBack } from "../../src/broker/hostedSubscription.js";
import type { HostedSubscription } from "../../src/brokerEntry.js";
import { RustStreamError } from "../../src/index.js";

/** A subscription that logs what it is asked, answers `held` on surrender, or fails it. */
function hosted(
  name: string,
  log: string[],
  held: number | Error,
  surrenderMs = 0,
): HostedSubscription {
  return {
    revoke: (error) => {
      log.push(`${name} revoked (${error.code})`);
    },
    surrender: async () => {
      log.push(`${name} surrenders`);
      await new Promise((resolve) => setTimeout(resolve, surrenderMs));
      log.push(`${name} surrendered`);
      if (held instanceof Error) throw held;
      return held;
    },
  };
}

const closed = new RustStreamError("closed", "shut down");

describe("takeBack", () => {
  it("revokes every subscription before any surrenders, so none pulls what another gives back", async () => {
    const log: string[] = [];
    await takeBack([hosted("a", log, 1), hosted("b", log, 2)], closed);
    expect(log.slice(0, 2)).toEqual(["a revoked (closed)", "b revoked (closed)"]);
  });

  it("surrenders all together and answers how many deliveries went back", async () => {
    const log: string[] = [];
    const returned = await takeBack([hosted("a", log, 3, 20), hosted("b", log, 4, 1)], closed);
    expect(returned).toBe(7);
    // b starts before a has finished, and finishes first.
    expect(log.slice(2)).toEqual([
      "a surrenders",
      "b surrenders",
      "b surrendered",
      "a surrendered",
    ]);
  });

  it("counts a failed surrender as 0 and still takes back the others", async () => {
    const log: string[] = [];
    const returned = await takeBack(
      [hosted("a", log, new Error("connection lost")), hosted("b", log, 5)],
      closed,
    );
    expect(returned).toBe(5);
    expect(log).toContain("b surrendered");
  });

  it("within a bound, counts what surrendered in time and leaves the rest to finish", async () => {
    const log: string[] = [];
    // A surrender that never ends, as over a server that stopped answering: unbounded, this hangs.
    const stuck: HostedSubscription = {
      revoke: () => undefined,
      surrender: () => new Promise<number>(() => {}),
    };
    const returned = await takeBack([hosted("quick", log, 2), stuck], closed, 30);
    expect(returned).toBe(2);
    expect(log).toContain("quick surrendered");
  });
});
