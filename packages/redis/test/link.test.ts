import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { resolveConnection } from "../src/client/connectionOptions.js";
import { IoredisLink } from "../src/client/ioredisLink.js";
import { errorCode, type Reply, text } from "../src/client/resp.js";
import { countingWrites as countingWritesTo } from "./socketWrites.js";

// The main connection writes the commands of one tick together (one socket write), while each keeps
// its own reply, its own error and its place in the connection's order.

const url = () => requireEnv("REDIS_URL");
let link: IoredisLink;
let port: number;

beforeAll(async () => {
  const settings = resolveConnection({ url: url() });
  if (settings.kind !== "server") throw new Error("REDIS_URL resolved to no single server");
  port = settings.port;
  link = await IoredisLink.connect(settings);
});
afterAll(() => link.close());
afterEach(() => vi.restoreAllMocks());

const countingWrites = <T>(work: () => Promise<T>) => countingWritesTo(port, work);

const outcome = (settled: PromiseSettledResult<Reply>): string =>
  settled.status === "fulfilled"
    ? `ok ${text(settled.value)}`
    : `error ${errorCode(settled.reason)}`;

describe("one tick, one write", () => {
  it("sends one tick's commands in one write, each with its own reply or error", async () => {
    const key = uniqueName("tick");
    const { result, writes } = await countingWrites(() =>
      Promise.allSettled([
        link.call("SET", [key, "v"]),
        link.call("INCR", [key]), // not an integer: this command alone fails
        link.call("GET", [key]),
        link.call("LPUSH", [key, "x"]), // wrong type: fails alone
        link.call("APPEND", [key, "w"]),
        link.call("GET", [key]),
      ]),
    );
    expect(result.map(outcome)).toEqual([
      "ok OK",
      "error ERR",
      "ok v",
      "error WRONGTYPE",
      "ok 2",
      "ok vw",
    ]);
    expect(writes).toBe(1);
    await link.call("DEL", [key]);
  });

  it("keeps the connection's order across many commands of one tick", async () => {
    const key = uniqueName("order");
    const { result, writes } = await countingWrites(() =>
      Promise.all(Array.from({ length: 200 }, () => link.call("INCR", [key]))),
    );
    expect(result).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(writes).toBe(1);
    await link.call("DEL", [key]);
  });

  it("joins commands issued from promise reactions of the same tick", async () => {
    const key = uniqueName("reactions");
    const { result, writes } = await countingWrites(async () => {
      const first = link.call("INCR", [key]);
      // Resolved promises run their reactions before the tick ends, as a batch's settles do.
      const later = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          Promise.resolve(i).then(() => link.call("INCR", [key])),
        ),
      );
      return [await first, ...later];
    });
    expect(result).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(writes).toBe(1);
    await link.call("DEL", [key]);
  });

  it("writes commands of later ticks in later writes", async () => {
    const key = uniqueName("ticks");
    const { result, writes } = await countingWrites(async () => {
      const a = await link.call("INCR", [key]);
      const b = await link.call("INCR", [key]);
      return [a, b];
    });
    expect(result).toEqual([1, 2]);
    expect(writes).toBe(2);
    await link.call("DEL", [key]);
  });

  it("keeps transactions atomic in the shared write, and answers a transaction's own error", async () => {
    const key = uniqueName("multi");
    const other = uniqueName("multi-other");
    const { result, writes } = await countingWrites(() =>
      Promise.allSettled([
        link.call("SET", [key, "1"]),
        link.transaction([
          { name: "INCR", args: [key] },
          { name: "RPUSH", args: [other, "a"] },
        ]),
        link.transaction([{ name: "LPUSH", args: [key, "x"] }]),
        link.call("GET", [key]),
      ]),
    );
    expect(result[0]).toMatchObject({ status: "fulfilled" });
    expect(result[1]).toEqual({ status: "fulfilled", value: [2, 1] });
    expect(result[2]).toMatchObject({ status: "rejected" });
    expect(errorCode((result[2] as PromiseRejectedResult).reason)).toBe("WRONGTYPE");
    expect(result[3]).toEqual({ status: "fulfilled", value: Buffer.from("2") });
    expect(writes).toBe(1);
    await link.call("DEL", [key, other]);
  });

  it("writes what the tick sent on the main connection before a blocking read", async () => {
    const key = uniqueName("before-read");
    const reader = await link.blocking(key);
    try {
      const { result, log } = await countingWrites(() =>
        Promise.all([
          link.call("RPUSH", [key, "a"]),
          link.call("RPUSH", [key, "b"]),
          reader.call("BLMOVE", [key, `${key}.to`, "LEFT", "LEFT", "1"]),
          // Another key: which of two connections the server reads first, when both wrote before
          // it ran, is the server's choice, so a push after the read may land before it.
          link.call("RPUSH", [`${key}.after`, "c"]),
        ]),
      );
      // Written in the order issued: the read finds what the main connection pushed before it.
      expect(result.map((r) => (typeof r === "number" ? r : text(r)))).toEqual([1, 2, "a", 1]);
      expect(log.map((w) => w.sent.match(/RPUSH|BLMOVE/g)?.join(","))).toEqual([
        "RPUSH,RPUSH",
        "BLMOVE",
        "RPUSH",
      ]);
      expect(log[0]!.socket).not.toBe(log[1]!.socket);
      expect(log[0]!.socket).toBe(log[2]!.socket);
    } finally {
      await reader.close();
      await link.call("DEL", [key, `${key}.to`, `${key}.after`]);
    }
  });

  it("sends a transaction of one command as the command alone", async () => {
    const key = uniqueName("single");
    const { result, sent } = await countingWrites(() =>
      link.transaction([{ name: "RPUSH", args: [key, "a"] }]),
    );
    expect(result).toEqual([1]);
    expect(sent).toContain("RPUSH");
    expect(sent).not.toMatch(/MULTI|EXEC/i);
    await link.call("DEL", [key]);
  });
});
