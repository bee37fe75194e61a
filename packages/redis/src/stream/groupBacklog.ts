import { type BacklogCounts, RustStreamError } from "@ruststream/core";
import type { Link } from "../client/link.js";
import { array, type Reply, text } from "../client/resp.js";

/**
 * A consumer group's backlog from one `XINFO GROUPS` (Redis 7.0 and later): `leased` its pending
 * entries (delivered to a consumer of the group, any replica, and not acked), `ready` its `lag`
 * (entries added after its last delivered one) where the server knows it. The server answers a
 * null lag when it cannot count (entries deleted or trimmed in the range, a group moved by
 * `XGROUP SETID`): no `ready` then, rather than a guess.
 */
export async function groupBacklog(
  link: Link,
  stream: string,
  group: string,
): Promise<BacklogCounts> {
  let groups: Reply[];
  try {
    groups = array(await link.call("XINFO", ["GROUPS", stream]));
  } catch (error) {
    throw new RustStreamError(
      "broker-failure",
      `reading the backlog of stream "${stream}" (XINFO GROUPS): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  for (const fields of groups) {
    const info = fieldsOf(fields);
    if (text(info.get("name")) !== group) continue;
    const pending = info.get("pending");
    const lag = info.get("lag");
    return {
      ...(typeof pending === "number" ? { leased: pending } : {}),
      ...(typeof lag === "number" ? { ready: lag } : {}),
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
