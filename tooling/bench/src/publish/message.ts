// What every publish row sends: the Redis bench's 512-byte payloads (distinct per message) and one
// of 64 partition keys, the same bytes on every broker and in every row, app or raw client.
export { payloadBytes, payloadOf } from "../redis/payload.js";

/** How many distinct keys the messages cycle through. */
export const keyCount = 64;

const keys = Array.from({ length: keyCount }, (_, k) => `key-${k}`);

/** The partition key of message `i`. */
export const keyOf = (i: number): string => keys[i % keyCount]!;

/** What the app publishes with: the bytes codec, so the payload goes out as it is. */
export const bytesContentType = "application/octet-stream";
