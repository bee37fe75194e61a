import type { Arg, Command, Reply } from "../client/resp.js";
import type { RedisScript, RunCommand } from "../client/script.js";

// A stream entry that leaves its group with a copy written elsewhere (a requeued copy, a delayed
// retry parked in its set, a dead letter) goes as one step on the server, and only from the consumer
// that holds it. As a transaction of copy-then-XACK, two things wrote the copy twice: a consumer that
// had lost the entry to a reclaim (its copy written beside the new owner's), and a dead letter the
// runtime publishes before it acks (a kill or a cut reply between the two left the entry pending, and
// its next delivery was dead-lettered again). The script checks that the entry is still pending for
// this consumer, writes the copy, and acks, so the copy is written once or not at all.

/**
 * KEYS[1] the source stream, KEYS[2] where the copy goes; ARGV[1] the group, ARGV[2] the consumer,
 * ARGV[3] the entry id, ARGV[4] the copy's command (`XADD` or `ZADD`), ARGV[5] a `PEXPIRE` for the
 * copy's key in ms (empty for none), ARGV[6..] the copy command's arguments after its key. Answers
 * the copy command's reply, or nil when the entry is no longer this consumer's to move.
 */
export const copyThenAckScript: RedisScript = {
  name: "ruststreamStreamCopyThenAck",
  keys: 2,
  lua: `if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2]) == 0 then return false end
local reply = redis.call(ARGV[4], KEYS[2], unpack(ARGV, 6))
if ARGV[5] ~= '' then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
return reply`,
  run(call: RunCommand, keys: readonly string[], args: readonly Arg[]): Reply {
    const [source, target] = keys as [string, string];
    const [group, consumer, id, name, expire] = args as [Arg, Arg, Arg, Arg, Arg];
    const pending = call("XPENDING", [source, group, id, id, 1, consumer]);
    if (!Array.isArray(pending) || pending.length === 0) return null;
    const reply = call(String(name), [target, ...args.slice(5)]);
    if (String(expire) !== "") call("PEXPIRE", [target, expire]);
    call("XACK", [source, group, id]);
    return reply;
  },
};

/** Where the entry is and who holds it: the script's first arguments. */
export interface HeldEntry {
  readonly stream: string;
  readonly group: string;
  readonly consumer: string;
  readonly id: string;
}

/** The script's keys and arguments for moving `held` with `copy` (and an optional expiry in ms). */
export function copyThenAckCall(
  held: HeldEntry,
  copy: Command,
  expireMs?: number,
): { keys: [string, string]; args: Arg[] } {
  const [target, ...rest] = copy.args;
  return {
    keys: [held.stream, String(target)],
    args: [
      held.group,
      held.consumer,
      held.id,
      copy.name,
      expireMs === undefined ? "" : expireMs,
      ...rest,
    ],
  };
}
