import type { Arg, Reply } from "../client/resp.js";
import type { RedisScript, RunCommand } from "../client/script.js";

// A reliable list's moves that must not stop half-way: a value moved into processing without its
// recovery claim would be held there for ever once its consumer is gone (a crash, or a restart that
// swallows the reply), and a value a sweeper took off processing without pushing it back would be
// lost. KEYS of both: the queue, the processing list, the recovery set.

/** A claim member's salt: `pid (4 B BE) | counter (8 B BE)`; the value follows it. */
export const SALT_LENGTH = 12;

/** A claim's member, as the take script writes it (RustStream's layout). */
export function claimMember(pid: Uint8Array, counter: number, value: Buffer): Buffer {
  const member = Buffer.allocUnsafe(SALT_LENGTH + value.length);
  member.set(pid, 0);
  member.writeBigUInt64BE(BigInt(counter), 4);
  value.copy(member, SALT_LENGTH);
  return member;
}

const asNumber = (arg: Arg | undefined): number =>
  Number(Buffer.isBuffer(arg) ? arg.toString() : arg);
const asBytes = (arg: Arg | undefined): Buffer =>
  Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg ?? ""));

/**
 * Moves up to ARGV[1] values from the queue's right end into processing, as many as it holds now.
 * With recovery on, each value moved is claimed in the same step: ARGV[2] is the claim time, and the
 * i-th value's claim member is `ARGV[3] (the pid, 4 bytes) | ARGV[4] + i - 1 (8 bytes BE) | value`,
 * RustStream's layout, from counters the caller reserved. Answers the values moved, first taken
 * first. A recovery key of another type is refused before anything moves.
 */
export const takeScript: RedisScript = {
  name: "ruststreamListTake",
  keys: 3,
  lua: `local claim = #ARGV > 1
local base = 0
if claim then
  redis.call('ZCARD', KEYS[3])
  base = tonumber(ARGV[4])
end
local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local value = redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
  if not value then break end
  taken[i] = value
  if claim then
    local counter = base + i - 1
    local salt = struct.pack('>I4I4', math.floor(counter / 4294967296), counter % 4294967296)
    redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3] .. salt .. value)
  end
end
return taken`,
  run(call: RunCommand, keys: readonly string[], args: readonly Arg[]): Reply {
    const [queue, processing, recovery] = keys as [string, string, string];
    const claim = args.length > 1;
    if (claim) call("ZCARD", [recovery]);
    const taken: Buffer[] = [];
    const max = asNumber(args[0]);
    for (let i = 0; i < max; i++) {
      const value = call("LMOVE", [queue, processing, "RIGHT", "LEFT"]);
      if (!Buffer.isBuffer(value)) break;
      taken.push(value);
      if (claim) {
        call("ZADD", [
          recovery,
          args[1]!,
          claimMember(asBytes(args[2]), asNumber(args[3]) + i, value),
        ]);
      }
    }
    return taken;
  },
};

/**
 * Gives back one value a dead consumer held: ARGV[1] is its claim, ARGV[2] the value as it sits in
 * processing, ARGV[3] the copy to push (its attempt counted). Only the sweeper whose `LREM` finds the
 * value pushes it, so two sweepers never double it; the claim goes either way. Answers 1 when the
 * value went back. A queue of another type is refused before anything is removed.
 */
export const recoverScript: RedisScript = {
  name: "ruststreamListRecover",
  keys: 3,
  lua: `redis.call('LLEN', KEYS[1])
local moved = redis.call('LREM', KEYS[2], 1, ARGV[2])
if moved == 1 then redis.call('LPUSH', KEYS[1], ARGV[3]) end
redis.call('ZREM', KEYS[3], ARGV[1])
return moved`,
  run(call: RunCommand, keys: readonly string[], args: readonly Arg[]): Reply {
    const [queue, processing, recovery] = keys as [string, string, string];
    call("LLEN", [queue]);
    const moved = call("LREM", [processing, 1, args[1]!]);
    if (moved === 1) call("LPUSH", [queue, args[2]!]);
    call("ZREM", [recovery, args[0]!]);
    return moved;
  },
};

/**
 * Releases a held value (processing list and claim), writing a copy of it first when one is given,
 * in one step and only while the value is still held: ARGV[1] the value as it sits in processing,
 * ARGV[2] its claim (empty with recovery off), ARGV[3] the copy's command (`LPUSH`, `RPUSH`, `XADD`;
 * empty for none), ARGV[4..] its arguments after its key. KEYS: the processing list, the recovery
 * set, where the copy goes. Every settlement of a list value goes through it: the ack (no copy), a
 * retry or a give-back (a counted copy onto the queue), the runtime's dead letter (a copy elsewhere).
 * Written as a `MULTI` of a write and a release, a kill or a cut reply between the two left the
 * value in processing to be recovered and handled again, and a cut reply made the client send the
 * transaction again after reconnecting, which wrote a second copy (and a second `LREM` could take an
 * equal value another delivery holds). A value whose claim is gone went back already (its holder
 * was taken for dead): nothing is written, and the answer is nil. The copy is written before
 * anything is removed, so a copy the server refuses (a key of another type) leaves the value where
 * it was. With recovery off no claim tells two equal values apart: then the value is found by its
 * bytes. Answers the copy's reply, or 1 for a release without one.
 */
export const settleScript: RedisScript = {
  name: "ruststreamListSettle",
  keys: 3,
  lua: `if ARGV[2] ~= '' and not redis.call('ZSCORE', KEYS[2], ARGV[2]) then return false end
if not redis.call('LPOS', KEYS[1], ARGV[1]) then return false end
local reply = 1
if ARGV[3] ~= '' then reply = redis.call(ARGV[3], KEYS[3], unpack(ARGV, 4)) end
redis.call('LREM', KEYS[1], 1, ARGV[1])
if ARGV[2] ~= '' then redis.call('ZREM', KEYS[2], ARGV[2]) end
return reply`,
  run(call: RunCommand, keys: readonly string[], args: readonly Arg[]): Reply {
    const [processing, recovery, target] = keys as [string, string, string];
    const [value, claim, name] = args as [Arg, Arg, Arg];
    const claimed = asBytes(claim).length > 0;
    if (claimed && call("ZSCORE", [recovery, claim]) === null) return null;
    if (call("LPOS", [processing, value]) === null) return null;
    const command = String(name);
    const reply = command === "" ? 1 : call(command, [target, ...args.slice(3)]);
    call("LREM", [processing, 1, value]);
    if (claimed) call("ZREM", [recovery, claim]);
    return reply;
  },
};
