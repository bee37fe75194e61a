/**
 * FNV-1a of a key: cheap, stable across processes and runs, good enough to spread keys over a few
 * lanes or partitions. Numbers hash as their decimal text, strings as their UTF-16 code units.
 */
export function hashKey(key: string | number | Uint8Array): number {
  let hash = 0x811c9dc5;
  if (typeof key === "number") key = String(key);
  if (typeof key === "string") {
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  } else {
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key[i]!, 0x01000193);
  }
  return hash >>> 0;
}
