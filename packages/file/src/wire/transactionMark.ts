import { HeaderMap, type ReadonlyHeaderMap } from "@ruststream/core";
import { TRANSACTION_HEADER } from "../names.js";
import { decodeEnvelope, firstHeaderOf, type Unwrapped } from "./envelope.js";

// How a transaction stays whole in a file that only grows, is read while it is written, and may be
// cut short by a crash: its frames are written together, one after another, each marked with the
// transaction's start (the file offset of its first frame) and its place (`index` of `count`),
// first in its header envelope. A reader holds a transaction's frames until the one marked
// `count` of `count` is read whole, and drops them when anything else comes first; a writer
// reopening the file cuts a transaction it finds without its last frame, back to its start. A
// transaction of one message needs no mark: a frame cut short is never read. The frames are plain
// frames to a SeaStreamer reader, and the mark one more header to a RustStream reader of another
// language, which read them as they land.

/** Where a frame stands in a transaction of two or more messages. */
export interface TransactionMark {
  /** File offset of the transaction's first frame: what names the transaction in its file. */
  readonly start: number;
  /** The frame's place, from 1. */
  readonly index: number;
  /** How many frames the transaction has: the one marked `count` completes it. */
  readonly count: number;
}

/**
 * The longest mark, which a message is measured with when it is staged, before its transaction's
 * start is known: the mark written at commit is never longer, so a staged message never turns out
 * too large at commit.
 */
export const WIDEST_MARK: TransactionMark = {
  start: Number.MAX_SAFE_INTEGER,
  index: Number.MAX_SAFE_INTEGER,
  count: Number.MAX_SAFE_INTEGER,
};

/** The mark's longest header line (name, value and separators), and so its `rs2:` entry too. */
const MARK_BYTES = TRANSACTION_HEADER.length + 8 + 3 * 16 + 2;
const MARK_VALUE = /^(0|[1-9][0-9]{0,15}) ([1-9][0-9]{0,15})\/([1-9][0-9]{0,15})$/;
const latin1 = new TextDecoder("latin1");

/** `headers` with `mark` first, where readers look for it; as they are for a one-message transaction. */
export function withMark(headers: ReadonlyHeaderMap, mark: TransactionMark): ReadonlyHeaderMap {
  if (mark.count < 2) return headers;
  const marked = new HeaderMap().set(
    TRANSACTION_HEADER,
    `${mark.start} ${mark.index}/${mark.count}`,
  );
  for (const [name, value] of headers.entriesAsHeld()) marked.set(name, value);
  return marked;
}

/**
 * The mark of a frame's payload, read from the start of its envelope only (every frame is looked
 * at, so a frame costs no more than its first header); `undefined` for a frame no transaction marked.
 */
export function readMark(payload: Uint8Array): TransactionMark | undefined {
  const first = firstHeaderOf(payload, MARK_BYTES);
  if (first === undefined || first[0] !== TRANSACTION_HEADER) return undefined;
  const match = MARK_VALUE.exec(latin1.decode(first[1]));
  if (match === null) return undefined;
  const start = Number(match[1]);
  const index = Number(match[2]);
  const count = Number(match[3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(count) || count < 2 || index > count) {
    return undefined;
  }
  return { start, index, count };
}

/**
 * A frame's payload and headers as a handler gets them: unwrapped from the envelope, without the
 * mark, which says where a frame stood in its file and nothing about the message.
 */
export function unwrapFrame(payload: Uint8Array): Unwrapped {
  const unwrapped = decodeEnvelope(payload);
  unwrapped.headers.delete(TRANSACTION_HEADER);
  return unwrapped;
}
