import { createHash } from "node:crypto";
import type { BindingSpec, ExchangeType, Table } from "../topology/topology.js";

// How each kind of exchange picks its bindings for a message, as the server does: direct by equal
// key, topic by pattern (`*` one word, `#` zero or more), fanout every binding, headers by the
// binding's `x-match` (all or any; `x-`-prefixed binding arguments take no part), consistent-hash
// one binding by the hash of the routing key, bindings weighted by their key (a number of points).

export function matches(
  type: ExchangeType,
  binding: BindingSpec,
  routingKey: string,
  headers: Table,
): boolean {
  switch (type) {
    case "direct":
      return binding.routingKey === routingKey;
    case "topic":
      return topicMatches(binding.routingKey.split("."), routingKey.split("."));
    case "fanout":
      return true;
    case "headers":
      return headersMatch(binding.arguments, headers);
    case "x-consistent-hash":
      // Chosen among all bindings by pickByHash; every one is a candidate.
      return true;
  }
}

function topicMatches(pattern: readonly string[], words: readonly string[]): boolean {
  if (pattern.length === 0) return words.length === 0;
  const [head, ...rest] = pattern;
  if (head === "#") {
    for (let skip = 0; skip <= words.length; skip++) {
      if (topicMatches(rest, words.slice(skip))) return true;
    }
    return false;
  }
  if (words.length === 0) return false;
  return (head === "*" || head === words[0]) && topicMatches(rest, words.slice(1));
}

function headersMatch(args: Table, headers: Table): boolean {
  const any = args["x-match"] === "any" || args["x-match"] === "any-with-x";
  const entries = Object.entries(args).filter(([name]) => !name.startsWith("x-"));
  if (entries.length === 0) return !any;
  const equal = ([name, value]: [string, unknown]) =>
    Object.hasOwn(headers, name) && (value === undefined || sameValue(headers[name], value));
  return any ? entries.some(equal) : entries.every(equal);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  if (a instanceof Uint8Array) return Buffer.from(a).toString() === String(b);
  return a === b || String(a) === String(b);
}

/**
 * A consistent-hash exchange's choice: each binding owns as many points on a ring as its key says,
 * and the message goes to the owner of the first point at or after its key's hash. Deterministic
 * (a key always lands on the same binding while the bindings stay), as the server's is; the points
 * themselves differ from the server's.
 */
export function pickByHash(bindings: readonly BindingSpec[], routingKey: string): BindingSpec[] {
  const ring: Array<{ point: number; binding: BindingSpec }> = [];
  for (const binding of bindings) {
    const weight = Math.max(1, Number.parseInt(binding.routingKey, 10) || 1);
    for (let i = 0; i < weight; i++) {
      ring.push({ point: hash(`${binding.destinationKind}:${binding.destination}:${i}`), binding });
    }
  }
  if (ring.length === 0) return [];
  ring.sort((a, b) => a.point - b.point);
  const at = hash(routingKey);
  const owner = ring.find((r) => r.point >= at) ?? ring[0];
  return owner === undefined ? [] : [owner.binding];
}

function hash(text: string): number {
  return createHash("sha1").update(text).digest().readUInt32BE(0);
}
