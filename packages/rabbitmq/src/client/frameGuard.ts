import { RustStreamError } from "@ruststream/core";
import type { ChannelModel } from "amqplib";
import { guardFirstFrame } from "./contentHeader.js";

/** What this guard reads of amqplib's connection (2.x): the bytes not yet framed, and its reader. */
interface FrameReader {
  rest: Buffer;
  recvFrame: (this: FrameReader) => unknown;
}

function isFrameReader(value: unknown): value is FrameReader {
  const reader = value as Partial<FrameReader> | undefined;
  return typeof reader?.recvFrame === "function" && Buffer.isBuffer(reader.rest);
}

/**
 * Puts the content header check (contentHeader.ts) in front of amqplib's frame decoder on this
 * connection: each time amqplib reads a frame, the first one buffered is checked whole, and a
 * header table it could not decode safely is replaced before it does. amqplib has no hook for
 * this, so the guard wraps the connection's own frame reader; an amqplib whose connection reads
 * frames otherwise is refused here, as a connection without the guard could be stopped by one
 * message (the peer range is the one this shape was checked on).
 */
export function guardFrames(model: ChannelModel): void {
  const connection: unknown = (model as { connection?: unknown }).connection;
  if (!isFrameReader(connection)) {
    throw new RustStreamError(
      "broker-failure",
      "this amqplib's connection does not read frames as amqplib 2.x does, so @ruststream/rabbitmq cannot check message headers before amqplib decodes them: install the amqplib version its peerDependencies name",
    );
  }
  const read = connection.recvFrame;
  connection.recvFrame = function guarded(this: FrameReader) {
    this.rest = guardFirstFrame(this.rest);
    return read.call(this);
  };
}
