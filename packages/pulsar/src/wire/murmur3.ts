// The hashes Pulsar's Java client routes keyed messages with, on a partitioned topic:
// partition = signSafeMod(hash(key), partitions). Its default scheme is JavaStringHash
// (String.hashCode over UTF-16 code units, & 0x7fffffff); the alternative, Murmur3_32Hash, is
// MurmurHash3 x86 32-bit with seed 0 over the key's UTF-8 bytes, & 0x7fffffff. Both were checked
// against the Java client's own classes (test/murmur3.test.ts).

const encoder = new TextEncoder();

/** MurmurHash3 x86 32-bit (unsigned result) of `bytes` with `seed`. */
export function murmur3_32(bytes: Uint8Array, seed = 0): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  let h = seed >>> 0;
  const blocks = bytes.length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = bytes.length & 3;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[blocks + 2]! << 16;
    if (tail >= 2) k ^= bytes[blocks + 1]! << 8;
    k ^= bytes[blocks]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    h ^= k;
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Java's `String.hashCode()`: over UTF-16 code units, as JavaScript strings hold them. */
export function javaStringHashCode(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return h;
}

/** How a key picks a partition: the Java client's two schemes, under their Java names. */
export type HashingScheme = "JavaStringHash" | "Murmur3_32Hash";

/** The key's hash under `scheme`, masked to 31 bits as the Java client masks it. */
export function keyHash(key: string, scheme: HashingScheme): number {
  const hash =
    scheme === "Murmur3_32Hash" ? murmur3_32(encoder.encode(key), 0) : javaStringHashCode(key);
  return hash & 0x7fffffff;
}

/** The partition the Java client sends a message with this key to. */
export function partitionForKey(key: string, partitions: number, scheme: HashingScheme): number {
  return keyHash(key, scheme) % partitions;
}
