import { type BacklogCounts, RustStreamError } from "@ruststream/core";
import type { Link } from "../client/link.js";
import { array, type Command, type Reply, text } from "../client/resp.js";
import { oneSlot } from "../client/slots.js";

/**
 * A consumer group's backlog from one `XINFO GROUPS` (Redis 7.0 and later): `leased` its pending
 * entries (delivered to a consumer of the group, any replica, and not acked), `ready` its `lag`
 * (entries added after its last delivered one) where the server knows it. The server answers a
 * null lag when it cannot count (entries deleted or trimmed in the range, a group moved by
 * `XGROUP SETID`): no `ready` then, rather than a guess.
 *
 * With the stream's delayed-retry set `delayed`, two `ZCOUNT`s of it go in the same `MULTI`, one
 * round trip and one snapshot: members due later are `scheduled`; members already due wait only for
 * a subscription's next sweep to go back onto the stream, so they count as `ready` with the lag (no
 * `ready` at all when the lag is unknown). A copy swept back is appended to the stream, which every
 * group reads: each member waits for this group, whichever group parked it. On a cluster whose set
 * lies in another slot than the stream (a `delayedRetry.key` without the stream's hash tag) no
 * transaction reaches both: the two reads go at once to their two nodes, and answer two moments.
 */
export async function groupBacklog(
  link: Link,
  stream: string,
  group: string,
  delayed?: string,
): Promise<BacklogCounts> {
  const info: Command = { name: "XINFO", args: ["GROUPS", stream] };
  let groups: Reply;
  let parked: { due: number; later: number } | undefined;
  try {
    if (delayed === undefined) {
      groups = await link.call(info.name, info.args);
    } else {
      const now = link.now();
      const counts: Command[] = [
        { name: "ZCOUNT", args: [delayed, "-inf", now] },
        { name: "ZCOUNT", args: [delayed, `(${now}`, "+inf"] },
      ];
      let due: Reply;
      let later: Reply;
      if (link.cluster === undefined || oneSlot([stream, delayed])) {
        [groups = null, due = null, later = null] = await link.transaction([info, ...counts]);
      } else {
        [groups, [due = null, later = null]] = await Promise.all([
          link.call(info.name, info.args),
          link.transaction(counts),
        ]);
      }
      parked = { due: Number(due), later: Number(later) };
    }
  } catch (error) {
    const read = delayed === undefined ? "XINFO GROUPS" : `XINFO GROUPS, ZCOUNT of "${delayed}"`;
    throw new RustStreamError(
      "broker-failure",
      `reading the backlog of stream "${stream}" (${read}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  for (const fields of array(groups)) {
    const info = fieldsOf(fields);
    if (text(info.get("name")) !== group) continue;
    const pending = info.get("pending");
    const lag = info.get("lag");
    return {
      ...(typeof pending === "number" ? { leased: pending } : {}),
      ...(typeof lag === "number" ? { ready: lag + (parked?.due ?? 0) } : {}),
      ...(parked === undefined ? {} : { scheduled: parked.later }),
    };
  }
  throw new RustStreamError(
    "invalid-argument",
    `reading the backlog of stream "${stream}": it has no consumer group "${group}" (deleted under the app?)`,
  );
}

/** A reply's flat field list (`name`, value, ...) as a map by field name. */
function fieldsOf(reply: Reply): Map<string, Reply> {
  const flat = array(reply);
  const map = new Map<string, Reply>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(text(flat[i]), flat[i + 1] ?? null);
  return map;
}
