import { createHash } from "node:crypto";
import { RustStreamError } from "@ruststream/core";

// An object store's entry for one object, as the object store clients write it (JSON on the
// object's info subject), and the checks a read makes on what it gathers, the same on the server's
// link and on the stand-in's.

/** What an object store keeps of one object (the clients' `ObjectInfo`, as stored). */
export interface NatsObjectInfo {
  readonly name: string;
  readonly bucket: string;
  /** The object's unique id: its chunks' subject. */
  readonly nuid: string;
  readonly size: number;
  readonly chunks: number;
  /** `SHA-256=` and the content's digest, base64url with padding. */
  readonly digest: string;
  readonly deleted?: boolean;
  /** When it was put, ISO 8601. */
  readonly mtime: string;
}

/** The digest the clients write: `SHA-256=` and base64url with padding. */
export function digestOf(content: Uint8Array): string {
  const b64 = createHash("sha256").update(content).digest("base64");
  return `SHA-256=${b64.replaceAll("+", "-").replaceAll("/", "_")}`;
}

/** Reads an entry's JSON; one that is not an object's info is `invalid-argument`. */
export function parseObjectInfo(payload: Uint8Array): NatsObjectInfo {
  let info: unknown;
  try {
    info = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    info = undefined;
  }
  const i = info as Partial<NatsObjectInfo> | undefined;
  if (
    typeof i !== "object" ||
    i === null ||
    typeof i.name !== "string" ||
    typeof i.nuid !== "string" ||
    !Number.isSafeInteger(i.size) ||
    !Number.isSafeInteger(i.chunks)
  ) {
    throw new RustStreamError(
      "invalid-argument",
      "an object store entry that is not an object's info (JSON with name, nuid, size, chunks)",
    );
  }
  return i as NatsObjectInfo;
}

/** Refuses a read of an object larger than `maxBytes`, before a byte of it is read. */
export function assertReadable(info: NatsObjectInfo, maxBytes: number): void {
  if (info.size > maxBytes) {
    throw new RustStreamError(
      "unsupported",
      `the object "${info.name}" of "${info.bucket}" is ${info.size} bytes, over the ${maxBytes} this read takes: raise the watch's maxBytes, or read it with the object store client as a stream`,
    );
  }
}

/**
 * Joins the chunks read, checking them against the info: their count, their size (never past it:
 * the caller stops there) and the digest.
 */
export function joinChunks(info: NatsObjectInfo, chunks: readonly Uint8Array[]): Uint8Array {
  const size = chunks.reduce((sum, c) => sum + c.length, 0);
  if (chunks.length !== info.chunks || size !== info.size) {
    throw new RustStreamError(
      "broker-failure",
      `the object "${info.name}" of "${info.bucket}" is not whole: ${chunks.length} chunks of ${size} bytes where its info says ${info.chunks} of ${info.size} (replaced or deleted since this entry)`,
    );
  }
  const content = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    content.set(chunk, at);
    at += chunk.length;
  }
  if (info.digest !== "" && digestOf(content) !== info.digest) {
    throw new RustStreamError(
      "broker-failure",
      `the object "${info.name}" of "${info.bucket}" does not match its digest (${info.digest}): corrupt, or replaced since this entry`,
    );
  }
  return content;
}
