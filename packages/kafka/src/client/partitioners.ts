import { crc32 } from "node:zlib";
import type { Partitioner } from "./link.js";

// The two ways a record key picks a partition, as the clients define them, so the same key lands on
// the same partition whichever client wrote it. `murmur2`: the Java client's default (and
// librdkafka's `murmur2_random`, kafkajs's DefaultPartitioner): `toPositive(murmur2(key)) % n`.
// `consistent-random`: librdkafka's default (`consistent_random`): `crc32(key) % n`. A record
// without a key goes round robin: no key means no promise about its partition.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** MurmurHash2, 32-bit, as Kafka's `Utils.murmur2` computes it (signed result, as Java's int). */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  // The tail: Java's switch falls through from the highest remaining byte down to the first.
  const tail = length & 3;
  if (tail === 3) h ^= data[whole + 2]! << 16;
  if (tail >= 2) h ^= data[whole + 1]! << 8;
  if (tail >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's `Utils.toPositive`: the sign bit cleared (not `Math.abs`, which differs on MIN_VALUE). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/** The partition of a keyed record under `partitioner`, over `count` partitions. */
export function partitionOfKey(partitioner: Partitioner, key: Uint8Array, count: number): number {
  if (partitioner === "murmur2") return toPositive(murmur2(key)) % count;
  return crc32(key) % count;
}

/** Picks partitions: by key where there is one, round robin per topic where there is not. */
export class KeyPartitioner {
  readonly #partitioner: Partitioner;
  readonly #next = new Map<string, number>();

  constructor(partitioner: Partitioner) {
    this.#partitioner = partitioner;
  }

  pick(topic: string, key: Uint8Array | undefined, count: number): number {
    if (key !== undefined) return partitionOfKey(this.#partitioner, key, count);
    const next = this.#next.get(topic) ?? 0;
    this.#next.set(topic, (next + 1) % 0x7fffffff);
    return next % count;
  }
}
