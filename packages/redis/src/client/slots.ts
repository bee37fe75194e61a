import { RustStreamError } from "@ruststream/core";
import type { Command } from "./resp.js";

// Redis Cluster's hash slots. A cluster spreads 16384 slots over its masters and runs a transaction
// or a script on one node only, so every key it names must hash to one slot. The broker computes
// slots itself, as the server does (CRC16 of the key, or of its hash tag: the text between the first
// `{` and the next `}`, when not empty), to refuse a transaction across slots before sending it, to
// name the keys it derives from a key (a list's processing list, a stream's delayed set) in that
// key's slot, and to route a blocking reader to the node that serves its key.

export const SLOTS = 16384;

/** CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the checksum Redis Cluster hashes with. */
const crcTable = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[i] = crc & 0xffff;
  }
  return table;
})();

function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i++)
    crc = ((crc << 8) ^ crcTable[((crc >> 8) ^ bytes[i]!) & 0xff]!) & 0xffff;
  return crc;
}

const encoder = new TextEncoder();
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }

/** The slot of `key`: of its hash tag when it has one, else of the whole key. */
export function hashSlot(key: string): number {
  const bytes = encoder.encode(key);
  const open = bytes.indexOf(OPEN);
  if (open >= 0) {
    const close = bytes.indexOf(CLOSE, open + 1);
    if (close > open + 1) return crc16(bytes, open + 1, close) % SLOTS;
  }
  return crc16(bytes, 0, bytes.length) % SLOTS;
}

/** Whether `key` carries a hash tag: a `{`, then a `}` with something between. */
export function hasHashTag(key: string): boolean {
  const open = key.indexOf("{");
  return open >= 0 && key.indexOf("}", open + 1) > open + 1;
}

/**
 * The name of a key derived from `key` (its processing list, its delayed-retry set). On one server,
 * `key` and the suffix, as always. On a cluster, in `key`'s slot: a key with a hash tag already
 * places whatever follows it there; a key without one is put in braces (`jobs` becomes
 * `{jobs}.processing`, which hashes like `jobs` itself). A key holding a `}` but no tag cannot be
 * braced into its own slot: it keeps the plain name, and the cluster's slot check refuses it.
 */
export function derivedKey(key: string, suffix: string, cluster: boolean): string {
  if (!cluster || hasHashTag(key) || key.includes("}")) return `${key}${suffix}`;
  return `{${key}}${suffix}`;
}

/**
 * The key a command this package sends in a transaction names: its first argument, except for
 * `PUBLISH`, whose channel is no key (a classic message reaches every node from any node), and
 * `XINFO`, whose first argument is its subcommand (`XINFO GROUPS key`).
 */
export function keyOf(command: Command): string | undefined {
  const name = command.name.toUpperCase();
  if (name === "PUBLISH") return undefined;
  const first = command.args[name === "XINFO" ? 1 : 0];
  return first === undefined ? undefined : String(first);
}

/** The keys of `keys` with their slots, for messages: `"a" (slot 1), "b" (slot 2)`. */
function slotList(keys: readonly string[]): string {
  return [...new Set(keys)].map((k) => `"${k}" (slot ${hashSlot(k)})`).join(", ");
}

/** Whether every key hashes to one slot. */
export function oneSlot(keys: readonly string[]): boolean {
  const first = keys[0];
  if (first === undefined) return true;
  const slot = hashSlot(first);
  return keys.every((k) => hashSlot(k) === slot);
}

/**
 * Refuses a transaction whose commands name keys of more than one slot, as a cluster would refuse
 * its `EXEC` (`CROSSSLOT`), before anything is sent; the same check on the server and in-process.
 */
export function assertOneSlot(commands: readonly Command[]): void {
  const keys = commands.map(keyOf).filter((k): k is string => k !== undefined);
  if (oneSlot(keys)) return;
  throw new RustStreamError(
    "unsupported",
    `a Redis Cluster runs a transaction on one node, and its keys hash to different slots: ${slotList(keys)}. Give the names one hash tag (in "{orders}.created" and "{orders}.billed" only "orders" is hashed, so both share a slot), or publish them outside a transaction`,
  );
}

/**
 * Refuses the keys of one script (a reliable list's queue, processing list and recovery set) when a
 * cluster would place them apart: the script runs on one node and must reach all of them there.
 */
export function assertScriptKeys(what: string, keys: readonly string[], fix: string): void {
  if (oneSlot(keys)) return;
  throw new RustStreamError(
    "invalid-argument",
    `${what}: on a Redis Cluster its keys must share a hash slot (a script moves values between them on one node), and they do not: ${slotList(keys)}. ${fix}`,
  );
}
