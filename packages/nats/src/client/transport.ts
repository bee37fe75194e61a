import {
  type ConnectionOptions,
  connect,
  type NatsConnection,
  wsconnect,
} from "@nats-io/transport-node";
import { RustStreamError } from "@ruststream/core";

// The NATS client keeps its transport (TCP or websocket) in one variable per process: connect()
// and wsconnect() each set it, and every later dial of any connection, a reconnect included, makes
// its socket with the one set last. A TCP connection open beside a websocket one would reconnect
// over the other's transport, so a process holds connections of one kind at a time, and a second
// kind is refused while the first has any open.

export type TransportKind = "TCP" | "websocket";

const open: Record<TransportKind, number> = { TCP: 0, websocket: 0 };

/** Opens a client connection over `kind`, refused while the other kind has connections open. */
export async function dial(
  kind: TransportKind,
  options: ConnectionOptions,
): Promise<NatsConnection> {
  const other: TransportKind = kind === "TCP" ? "websocket" : "TCP";
  if (open[other] > 0) {
    throw new RustStreamError(
      "invalid-argument",
      `NatsBroker: this process has ${open[other]} NATS connection(s) over ${other} open, and the NATS client keeps one transport per process (each connect sets it; every reconnect dials with the one set last), so a connection over ${kind} cannot open beside them: close those first, or give every NatsBroker in the process servers of one kind`,
    );
  }
  if (kind === "websocket" && typeof globalThis.WebSocket !== "function") {
    // The client's websocket transport calls `new WebSocket` and, without one, never settles.
    throw new RustStreamError(
      "invalid-argument",
      `NatsBroker: ws:// and wss:// servers need Node's global WebSocket (Node 22 or later); this is Node ${process.versions.node}`,
    );
  }
  open[kind] += 1;
  let released = false;
  const release = () => {
    if (!released) open[kind] -= 1;
    released = true;
  };
  try {
    const nc = kind === "TCP" ? await connect(options) : await wsconnect(options);
    void nc.closed().then(release);
    return nc;
  } catch (error) {
    release();
    throw error;
  }
}
