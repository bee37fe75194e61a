import { HeaderMap, headerNames } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConnection } from "../src/client/connectionOptions.js";
import { encodeFrame } from "../src/client/frame.js";
import { IoredisLink } from "../src/client/ioredisLink.js";
import type { Link } from "../src/client/link.js";
import type { Command, RedisBytes, Reply } from "../src/client/resp.js";
import { MemoryRedis } from "../src/inProcess/memoryRedis.js";
import { parseDelayedMember, sweepDelayed } from "../src/stream/delayedRetry.js";
import { entryFields, parseEntry, xadd } from "../src/stream/entry.js";

// A due delayed retry goes back onto its stream. The remove from the delayed set and the append to
// the stream must be one step: a sweeper whose connection was cut, or which died, between the two
// would otherwise have taken the message out of the set and put it nowhere.

let server: IoredisLink;
beforeAll(async () => {
  server = await IoredisLink.connect(resolveConnection({ url: requireEnv("REDIS_URL") }));
});
afterAll(() => server.close());

/** A parked member as `nackAfter` writes it: `u32 BE id length | id | frame(headers, payload)`. */
function parked(id: string, payload: string): Buffer {
  const idBytes = Buffer.from(id);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(idBytes.length);
  const frame = encodeFrame(new HeaderMap({ [headerNames.retryCount]: "1" }), bytes(payload));
  return Buffer.concat([length, idBytes, frame]);
}

const restoreTo =
  (stream: string) =>
  (member: RedisBytes): Command => {
    const { headers, payload } = parseDelayedMember(member);
    return xadd(stream, entryFields(headers, payload), undefined);
  };

/**
 * `link`, except that the first write's reply is lost after the server ran it, as when the
 * connection is cut (or the process dies) right then: the sweep sees an error, the server kept the write.
 */
function losingFirstWriteReply(link: Link): Link {
  let lost = false;
  const lose = async (run: () => Promise<Reply>): Promise<Reply> => {
    const reply = await run();
    if (!lost) {
      lost = true;
      throw new Error("connection lost before the reply");
    }
    return reply;
  };
  return new Proxy(link, {
    get(target, property) {
      if (property === "call") {
        return (name: string, args: Parameters<Link["call"]>[1]) =>
          name === "ZRANGEBYSCORE" ? target.call(name, args) : lose(() => target.call(name, args));
      }
      if (property === "script") {
        return (...args: Parameters<Link["script"]>) => lose(() => target.script(...args));
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function streamPayloads(link: Link, stream: string): Promise<string[]> {
  const reply = await link.call("XRANGE", [stream, "-", "+"]);
  return (reply as Reply[]).map((raw) => text(parseEntry(raw)!.payload));
}

describe("sweeping due delayed retries back onto the stream", () => {
  it.each([
    ["on the server", () => server as Link],
    ["in process", () => new MemoryRedis(undefined).link()],
  ])("%s: moves each due member once, even with two sweepers", async (_, linkOf) => {
    const link = linkOf();
    const stream = uniqueName("sweep");
    const delayed = `${stream}.delayed`;
    await link.call("ZADD", [delayed, 1, parked("1-1", "a"), 1, parked("1-2", "b")]);
    await link.call("ZADD", [delayed, Date.now() + 3_600_000, parked("1-3", "later")]);
    const now = Date.now();
    const [first, second] = await Promise.all([
      sweepDelayed(link, delayed, now, restoreTo(stream)),
      sweepDelayed(link, delayed, now, restoreTo(stream)),
    ]);
    expect(first + second).toBe(2);
    expect((await streamPayloads(link, stream)).sort()).toEqual(["a", "b"]);
    expect(await link.call("ZCARD", [delayed])).toBe(1);
  });

  it("a sweep whose reply is lost after the server ran it leaves the message on the stream, not lost", async () => {
    const stream = uniqueName("sweep-cut");
    const delayed = `${stream}.delayed`;
    await server.call("ZADD", [delayed, 1, parked("1-1", "kept")]);
    await expect(
      sweepDelayed(losingFirstWriteReply(server), delayed, Date.now(), restoreTo(stream)),
    ).rejects.toThrow(/connection lost/);
    // Out of the delayed set and onto the stream, or still parked: never neither.
    expect(await server.call("ZCARD", [delayed])).toBe(0);
    expect(await streamPayloads(server, stream)).toEqual(["kept"]);
  });
});
