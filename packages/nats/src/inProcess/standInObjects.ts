import { randomBytes } from "node:crypto";
import type { Frame, PubAck } from "../client/link.js";
import { assertReadable, digestOf, joinChunks, type NatsObjectInfo } from "../client/objectMeta.js";
import { kvHeaders, objChunkSubject, objMetaSubject } from "../names.js";
import type { StandInStream } from "./standInStream.js";

/** The chunk size the object store clients write: 128 KiB. */
const CHUNK = 128 * 1024;

/** What the object store needs of the stand-in server: storing a frame, and purging a subject. */
export interface ObjectServer {
  store(stream: StandInStream, frame: Frame): PubAck;
  purge(stream: StandInStream, subject: string): void;
}

/** A unique id for an object's chunks, 22 characters as the clients' nuid. */
function nuid(): string {
  return randomBytes(16).toString("base64url").slice(0, 22);
}

/** The latest info of `name` in the store, as the stream holds it. */
function latest(stream: StandInStream, bucket: string, name: string): NatsObjectInfo | undefined {
  const subject = objMetaSubject(bucket, name);
  const entry = [...stream.entries].reverse().find((e) => e.subject === subject);
  return entry === undefined
    ? undefined
    : (JSON.parse(new TextDecoder().decode(entry.payload)) as NatsObjectInfo);
}

/**
 * Puts an object as the clients do: its chunks on a subject of a new unique id, then its info
 * (JSON, a rollup of its info subject), then the chunks of the version it replaced purged.
 */
export function putObject(
  server: ObjectServer,
  stream: StandInStream,
  bucket: string,
  name: string,
  content: Uint8Array,
): { info: NatsObjectInfo; revision: bigint } {
  const old = latest(stream, bucket, name);
  const id = nuid();
  let chunks = 0;
  for (let at = 0; at < content.length; at += CHUNK) {
    server.store(stream, {
      subject: objChunkSubject(bucket, id),
      payload: content.slice(at, at + CHUNK),
      headers: [],
    });
    chunks++;
  }
  const info: NatsObjectInfo & { options: { max_chunk_size: number } } = {
    bucket,
    nuid: id,
    size: content.length,
    chunks,
    name,
    options: { max_chunk_size: CHUNK },
    mtime: new Date().toISOString(),
    digest: digestOf(content),
    deleted: false,
  };
  const ack = server.store(stream, {
    subject: objMetaSubject(bucket, name),
    payload: new TextEncoder().encode(JSON.stringify(info)),
    headers: [[kvHeaders.rollup, "sub"]],
  });
  if (old !== undefined) server.purge(stream, objChunkSubject(bucket, old.nuid));
  return { info, revision: ack.sequence };
}

/** Reads the chunks of the version `info` names, as the server's link does. */
export function readObject(
  stream: StandInStream,
  info: NatsObjectInfo,
  maxBytes: number,
): Uint8Array {
  assertReadable(info, maxBytes);
  const subject = objChunkSubject(info.bucket, info.nuid);
  const chunks = stream.entries.filter((e) => e.subject === subject).map((e) => e.payload);
  return joinChunks(info, chunks);
}
