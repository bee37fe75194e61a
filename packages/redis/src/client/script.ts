import type { Arg, Reply } from "./resp.js";

/** Runs one command and answers its reply, throwing the server's error reply. */
export type RunCommand = (name: string, args: readonly Arg[]) => Reply;

/**
 * A server-side script: several commands the server runs as one, so no crash, restart or lost reply
 * can leave only some of them done. The server runs `lua`; the in-process stand-in runs `run`, the
 * same commands in the same order through its own command table, in one synchronous step (nothing
 * interleaves, as nothing interleaves with a script on the server). The two are written side by side
 * and the suites run against both.
 */
export interface RedisScript {
  /** Names the script's command on an ioredis client (`defineCommand`). */
  readonly name: string;
  readonly keys: number;
  readonly lua: string;
  run(call: RunCommand, keys: readonly string[], args: readonly Arg[]): Reply;
}

/** The script's declared key count, checked: a mismatch would shift keys into arguments unnoticed. */
export function scriptKeys(script: RedisScript, keys: readonly string[]): readonly string[] {
  if (keys.length !== script.keys) {
    throw new RangeError(`script ${script.name} takes ${script.keys} keys, not ${keys.length}`);
  }
  return keys;
}
