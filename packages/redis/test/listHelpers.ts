import { bytes } from "@ruststream/tooling-testkit";
import {
  type ConnectedRedisBroker,
  RedisList,
  type RedisListSubscription,
  RedisPublish,
} from "../src/index.js";
import type { RedisListDelivery } from "../src/list/listDelivery.js";

// What the reliable-list settlement tests (listSettle, listDeadLetterWrite) share: a small list,
// its first delivery, a publish, and what the server holds for it.

/** How long a value is held before a sweeper with this idle time takes its holder for dead. */
export const HELD_FOR_DEAD_MS = 100;

/** A list pulling two at a time, briefly blocking; recovery on when `recoveryIdleMs` is given. */
export function list(key: string, recoveryIdleMs?: number): RedisList {
  return new RedisList(key, {
    count: 2,
    blockMs: 50,
    ...(recoveryIdleMs === undefined ? {} : { recoveryIdleMs }),
  });
}

/** What the server holds for `key`: queued, held, claimed. */
export async function held(connected: ConnectedRedisBroker, key: string): Promise<string> {
  const link = connected.link;
  const queue = await link.call("LLEN", [key]);
  const processing = await link.call("LLEN", [`${key}.processing`]);
  const claims = await link.call("ZCARD", [`${key}.recovery`]);
  return `queue ${queue}, processing ${processing}, claims ${claims}`;
}

export async function first(sub: RedisListSubscription): Promise<RedisListDelivery> {
  const next = await sub.next();
  if (next.done) throw new Error("the subscription ended");
  return next.value;
}

export async function publish(
  connected: ConnectedRedisBroker,
  key: string,
  ...payloads: string[]
): Promise<void> {
  const publisher = await new RedisPublish({ transport: "list" }).pair(connected);
  for (const payload of payloads) await publisher.publish({ name: key, payload: bytes(payload) });
}
