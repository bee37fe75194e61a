import { decodeFrame, type Framed } from "../client/frame.js";
import type { Link } from "../client/link.js";
import { type Arg, array, type Command, type RedisBytes, type Reply } from "../client/resp.js";
import type { RedisScript, RunCommand } from "../client/script.js";
import { SWEEP_BATCH } from "../names.js";

// The durable delayed retry, as RustStream's Redis crate keeps it: `nackAfter` adds a member to a
// sorted set scored by its due time (wall clock, epoch ms) and acks the original, in one step
// (copyThenAck.ts).
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
 * Moves one due member back, as one step on the server: removes ARGV[1] from the delayed set
 * (KEYS[1]) and, only if that removed it, appends the entry to the stream (KEYS[2]) with the `XADD`
 * arguments after the key (ARGV[2..]). Only the sweeper whose remove found the member appends it, so
 * concurrent sweepers never double a message; and as one step, no cut connection, crash or restart
 * between the remove and the append can lose it (as two commands, a sweeper that died after its
 * `ZREM` took the message with it). Answers 1 when it moved the member.
 */
export const restoreDelayedScript: RedisScript = {
  name: "ruststreamStreamRestoreDelayed",
  keys: 2,
  lua: `if redis.call('ZREM', KEYS[1], ARGV[1]) ~= 1 then return 0 end
redis.call('XADD', KEYS[2], unpack(ARGV, 2))
return 1`,
  run(call: RunCommand, keys: readonly string[], args: readonly Arg[]): Reply {
    const [delayed, stream] = keys as [string, string];
    if (call("ZREM", [delayed, args[0]!]) !== 1) return 0;
    call("XADD", [stream, ...args.slice(1)]);
    return 1;
  },
};

/** Moves due members of the delayed set `key` back onto their stream, one script call each. */
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
      const [stream, ...rest] = restore(member).args;
      if (await link.script(restoreDelayedScript, [key, String(stream)], [member, ...rest])) {
        moved++;
      }
    }
    if (due.length < SWEEP_BATCH) return moved;
  }
}
