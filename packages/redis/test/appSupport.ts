import { HeaderMap } from "@ruststream/core";
import { sleep } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";

// What the app tests need beside TestApp: a plain client to look at the server with, and a wait for
// live reactions that outlast TestApp's quiet period (backoffs, reclaim intervals).

/** A plain client on `url`, for the test to look at what the server holds. */
export function inspect(url: string): Redis {
  return new Redis(url, { protocol: 2 });
}

export interface WrittenEntry {
  readonly id: string;
  readonly payload: Buffer;
  readonly headers: HeaderMap;
}

/** Every entry of a stream, read as the package writes them (`_payload`, `h:<name>`). */
export async function entries(redis: Redis, key: string): Promise<WrittenEntry[]> {
  const rows = await redis.xrangeBuffer(key, "-", "+");
  return rows.map(([id, fields]) => {
    const headers = new HeaderMap();
    let payload: Buffer = Buffer.alloc(0);
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const name = fields[i]!.toString("latin1");
      if (name === "_payload") payload = fields[i + 1]!;
      else if (name.startsWith("h:")) headers.set(name.slice(2), fields[i + 1]!);
    }
    return { id: id.toString(), payload, headers };
  });
}

/** Entries of `key` the group has read and not acknowledged. */
export async function pendingCount(redis: Redis, key: string, group: string): Promise<number> {
  const summary = (await redis.xpending(key, group)) as unknown[];
  return Number(summary[0]);
}

/** Polls `condition` until it holds; fails with `what` after `ms`. */
export async function eventually(
  what: string,
  condition: () => boolean | Promise<boolean>,
  ms = 15_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what}`);
    await sleep(20);
  }
}
