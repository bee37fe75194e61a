import { decodeFrame, type Framed } from "../client/frame.js";
import type { Link } from "../client/link.js";
import { array, type Command, type RedisBytes } from "../client/resp.js";
import { SWEEP_BATCH } from "../names.js";

// The durable delayed retry, as RustStream's Redis crate keeps it: `nackAfter` adds a member to a
// sorted set scored by its due time (wall clock, epoch ms) and acks the original, in one transaction.
// A member is `u32 BE id length | entry id | frame(headers, payload)`: the id keeps two identical
// messages apart. Due members go back onto the stream at the top of a subscription's read.

/** Reads a member back into the message it parks; the id in front is only salt. */
export function parseDelayedMember(member: Uint8Array): Framed {
  if (member.length < 4) return decodeFrame(member);
  const idLength = new DataView(member.buffer, member.byteOffset, 4).getUint32(0);
  if (4 + idLength > member.length) return decodeFrame(member);
  return decodeFrame(member.subarray(4 + idLength));
}

/**
 * Moves due members back: each is removed first and only the process whose `ZREM` removed it appends
 * it, so concurrent sweepers never double a message.
 */
export async function sweepDelayed(
  link: Link,
  key: string,
  now: number,
  restore: (member: RedisBytes) => Command,
): Promise<number> {
  let moved = 0;
  for (;;) {
    const due = array(
      await link.call("ZRANGEBYSCORE", [key, "-inf", now, "LIMIT", 0, SWEEP_BATCH]),
    ).filter((m): m is Buffer => Buffer.isBuffer(m));
    for (const member of due) {
      if ((await link.call("ZREM", [key, member])) !== 1) continue;
      const command = restore(member);
      await link.call(command.name, command.args);
      moved++;
    }
    if (due.length < SWEEP_BATCH) return moved;
  }
}
