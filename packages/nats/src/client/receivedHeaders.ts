import { type MsgHdrs, MsgImpl } from "@nats-io/transport-node";
import { HeaderMap, RustStreamError } from "@ruststream/core";
import { headerMapOf, headerName } from "../headerValues.js";

// A message's headers as its sender wrote them: a block of lines, `NATS/1.0[ status]` and then
// `name: value`. They are read here, from the block's bytes, rather than through the client's
// `headers`: the client looks up every name it already holds for each line it reads (a 1 MiB block
// of 100,000 short headers, which the server's default max_payload lets through, took 152 s), and
// throws from inside our callback on a name that is not printable ASCII, which closed the
// connection's reader. A block that cannot be read (such a name, an empty one, a lone CR or LF in
// a value) leaves the message still delivered, with its payload and no headers, marked unreadable:
// the runtime settles it by the subscriber's decode policy.

/** What a received message's headers read as. */
export interface ReadHeaders {
  readonly headers: HeaderMap;
  /** Why they could not be read (core's error), or `undefined`. */
  readonly unreadable: RustStreamError | undefined;
  /** A status the server sent instead of a message (503: no responders), or `undefined`. */
  readonly status: number | undefined;
}

const HEAD = "NATS/1.0";
/** Lenient, as the client decodes a block: a byte that is not UTF-8 reads as U+FFFD. */
const utf8 = new TextDecoder();

/**
 * The header block of `message` as the server sent it, `undefined` when it carried none, or `null`
 * when the client keeps it where this package does not read: another client version than the one
 * it was written against (its message's own fields, not its API). Then the client's own parse
 * reads the headers (`fromClient`): slower on many headers, never a message marked unreadable for
 * the client's sake.
 */
function headerBlock(message: object): Uint8Array | undefined | null {
  // A JetStream message wraps the core one it arrived as.
  const core = message instanceof MsgImpl ? message : (message as { msg?: unknown }).msg;
  if (!(core instanceof MsgImpl)) return null;
  const fields = core as unknown as { _msg?: { hdr?: unknown }; _rdata?: unknown };
  const length = fields._msg?.hdr;
  const data = fields._rdata;
  if (typeof length !== "number" || !(data instanceof Uint8Array)) return null;
  return length > -1 ? data.subarray(0, length) : undefined;
}

/** A message as the client hands it over: its public `headers`, parsed by the client when read. */
export interface ClientMessage {
  readonly subject: string;
  readonly headers?: MsgHdrs | undefined;
}

/** The headers of `message` (the first value of a repeated name), or why they cannot be read. */
export function readHeaders(message: ClientMessage): ReadHeaders {
  try {
    const block = headerBlock(message);
    if (block === null) return fromClient(message.headers);
    return block === undefined
      ? { headers: new HeaderMap(), unreadable: undefined, status: undefined }
      : parseHeaderBlock(block);
  } catch (error) {
    return {
      headers: new HeaderMap(),
      unreadable: new RustStreamError(
        "invalid-argument",
        `a message on "${message.subject}" carries headers that cannot be read (${(error as Error).message}): a NATS header name is printable ASCII other than ":", a value one line; fix the sender`,
        { cause: error },
      ),
      status: undefined,
    };
  }
}

/** The headers as the client parsed them (it throws on a name that is not printable ASCII). */
function fromClient(parsed: MsgHdrs | undefined): ReadHeaders {
  if (parsed === undefined) {
    return { headers: new HeaderMap(), unreadable: undefined, status: undefined };
  }
  const lines: [string, string][] = [];
  for (const [name, values] of parsed) {
    const [first] = values;
    if (first !== undefined) lines.push([name, first]);
  }
  const code = parsed.code;
  return {
    headers: headerMapOf(lines),
    unreadable: undefined,
    status: code !== undefined && code > 0 ? code : undefined,
  };
}

/**
 * A header block's headers and status. Throws core's `invalid-argument` on a name that is empty or
 * not printable ASCII, or a value holding a lone CR or LF.
 */
export function parseHeaderBlock(block: Uint8Array): ReadHeaders {
  const lines: [string, string][] = [];
  let first = true;
  let status: number | undefined;
  for (const line of utf8.decode(block).split("\r\n")) {
    if (first) {
      first = false;
      // `NATS/1.0 503` or `NATS/1.0 408 Request Timeout`: what follows the version is a status.
      const code = Number.parseInt(line.replace(HEAD, "").trim(), 10);
      if (code > 0) status = code;
      continue;
    }
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    if (!headerName.test(name)) {
      throw new RustStreamError(
        "invalid-argument",
        `the header name ${JSON.stringify(name.slice(0, 64))} is ${name === "" ? "empty" : "not printable ASCII"}`,
      );
    }
    const value = line.slice(colon + 1).trim();
    if (/[\r\n]/.test(value)) {
      throw new RustStreamError(
        "invalid-argument",
        `the value of header "${name.slice(0, 64)}" holds a line break`,
      );
    }
    lines.push([name, value]);
  }
  return { headers: headerMapOf(lines), unreadable: undefined, status };
}
