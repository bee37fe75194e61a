// The values on the wire between the broker and Redis: a command's arguments and the RESP2 replies
// it gets back, with the readers every caller uses on them. The link, the scripts and the in-process
// stand-in all speak these shapes, so they sit below all three.

/**
 * Bytes on the connection: a Node Buffer at run time (ioredis answers Buffers, the stand-in makes
 * them, and the readers below check `Buffer.isBuffer`). Declared by the Buffer methods this package
 * calls, so the published types, which show the connection's shapes, need no @types/node.
 */
export interface RedisBytes extends Uint8Array {
  toString(encoding?: "utf8" | "latin1" | "hex" | "base64"): string;
  equals(other: Uint8Array): boolean;
  subarray(start?: number, end?: number): RedisBytes;
}

/** A command argument, as Redis takes it: bytes, or text and numbers sent as their digits. */
export type Arg = string | RedisBytes | number;

/** A RESP2 reply: bulk strings (and status replies) as bytes, integers, nil, arrays. */
export type Reply = RedisBytes | number | null | Reply[];

export interface Command {
  readonly name: string;
  readonly args: readonly Arg[];
}

export function text(reply: Reply | undefined): string {
  if (Buffer.isBuffer(reply)) return reply.toString("utf8");
  if (typeof reply === "number") return String(reply);
  return "";
}

export function array(reply: Reply | undefined): Reply[] {
  return Array.isArray(reply) ? reply : [];
}

/** A plain Uint8Array over a reply's bytes (no copy), so callers never see Buffer's extras. */
export function bytesOf(reply: Reply | undefined): Uint8Array {
  if (Buffer.isBuffer(reply)) return new Uint8Array(reply.buffer, reply.byteOffset, reply.length);
  return new Uint8Array(0);
}

/** The text of a server error reply, for matching its code (`NOGROUP`, `BUSYGROUP`, ...). */
export function errorCode(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return /^[A-Z]+/.exec(message)?.[0] ?? "";
}
