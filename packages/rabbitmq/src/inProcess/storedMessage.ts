import type { Coordinator } from "@ruststream/core/broker";
import type { LinkProperties } from "../link.js";
import type { Table, TableValue } from "../topology/topology.js";

/** A message in a stand-in queue: what was published, and what the queue counts of it. */
export interface StoredMessage {
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Uint8Array;
  readonly properties: LinkProperties;
  /** Returns to the queue so far (a quorum queue's `x-delivery-count`). */
  deliveryCount: number;
  redelivered: boolean;
  /**
   * The test's coordinator that counted it, from its first hand-off until settled for good: the
   * one released then, whichever connection's coordinator the server has by that time.
   */
  countedBy: Coordinator | undefined;
  /** When a TTL (the queue's or the message's) runs out, on the clock; undefined: never. */
  expiresAt: number | undefined;
  cancelExpiry: (() => void) | undefined;
}

export function stored(
  exchange: string,
  routingKey: string,
  content: Uint8Array,
  properties: LinkProperties,
): StoredMessage {
  return {
    exchange,
    routingKey,
    content,
    properties,
    deliveryCount: 0,
    redelivered: false,
    countedBy: undefined,
    expiresAt: undefined,
    cancelExpiry: undefined,
  };
}

/** Why a message left its queue for the dead-letter exchange, in the server's words. */
export type DeathReason = "rejected" | "expired" | "delivery_limit";

/**
 * The headers of a dead-lettered copy, as the server writes them: `x-death` (one entry per queue
 * and reason, counted) first, and `x-first-death-*` once.
 */
export function deathHeaders(
  headers: Table,
  queue: string,
  reason: DeathReason,
  message: StoredMessage,
  now: number,
): Table {
  const deaths = Array.isArray(headers["x-death"]) ? [...(headers["x-death"] as TableValue[])] : [];
  const same = deaths.findIndex((d) => {
    const entry = d as unknown as Record<string, unknown>;
    return entry.queue === queue && entry.reason === reason;
  });
  const previous = same >= 0 ? (deaths[same] as unknown as Record<string, unknown>) : undefined;
  const entry = {
    count: (typeof previous?.count === "number" ? previous.count : 0) + 1,
    reason,
    queue,
    time: Math.floor(now / 1000),
    exchange: message.exchange,
    "routing-keys": [message.routingKey],
  } as unknown as TableValue;
  if (same >= 0) deaths.splice(same, 1);
  deaths.unshift(entry);
  const first: Table =
    headers["x-first-death-queue"] === undefined
      ? {
          "x-first-death-queue": queue,
          "x-first-death-reason": reason,
          "x-first-death-exchange": message.exchange,
        }
      : {};
  return { ...headers, ...first, "x-death": deaths };
}
