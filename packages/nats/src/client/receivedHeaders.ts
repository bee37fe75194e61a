import type { MsgHdrs } from "@nats-io/transport-node";
import { HeaderMap, RustStreamError } from "@ruststream/core";
import { headerMapOf } from "../headerValues.js";

// A message's headers as its sender wrote them. The client parses the header block when it is
// first read and throws on a name that is not printable ASCII (a space, a non-ASCII letter), which
// any other client may send and the server passes on; core refuses an empty name. Either way the
// message is still delivered, with its payload, and marked unreadable: the runtime settles it by
// the subscriber's decode policy instead of the throw losing it (a core message) or failing the
// whole pull (a JetStream one, delivered again after every ack wait).

/** What a received message's headers read as. */
export interface ReadHeaders {
  readonly headers: HeaderMap;
  /** Why they could not be read (core's error), or `undefined`. */
  readonly unreadable: RustStreamError | undefined;
  /** A status the server sent instead of a message (503: no responders), or `undefined`. */
  readonly status: number | undefined;
}

/** A message as the client hands it over: its header block is parsed when `headers` is read. */
export interface WithHeaders {
  readonly subject: string;
  readonly headers?: MsgHdrs | undefined;
}

/** The headers of `message` (the first value of a repeated name), or why they cannot be read. */
export function readHeaders(message: WithHeaders): ReadHeaders {
  try {
    const parsed = message.headers;
    if (parsed === undefined) {
      return { headers: new HeaderMap(), unreadable: undefined, status: undefined };
    }
    const code = parsed.code;
    const lines: [string, string][] = [];
    for (const [name, values] of parsed) {
      const [first] = values;
      if (first !== undefined) lines.push([name, first]);
    }
    return {
      headers: headerMapOf(lines),
      unreadable: undefined,
      status: code !== undefined && code > 0 ? code : undefined,
    };
  } catch (error) {
    return {
      headers: new HeaderMap(),
      unreadable: new RustStreamError(
        "invalid-argument",
        `a message on "${message.subject}" carries headers that cannot be read (${(error as Error).message}): a NATS header name is printable ASCII without a colon, and not empty; fix the sender`,
        { cause: error },
      ),
      status: undefined,
    };
  }
}
