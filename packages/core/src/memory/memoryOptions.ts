import type { Clock } from "../clock.js";
import type { ServerDescription } from "../server.js";
import { hostFromUrl } from "../server.js";

// The broker's options, read by the broker (checked when it is built) and by its connections: in a
// file of their own, so memoryBroker.ts imports memoryConnection.ts and nothing imports either back.
// Beside them, what is read from them alone: the server's description.

export interface MemoryBrokerOptions {
  /**
   * Settled messages each topic keeps for seeking, beyond those a group still needs (default 1000).
   * A group that lags keeps its unsettled messages whatever this says.
   */
  readonly retain?: number;
  /** The largest payload a publish may carry (default 16 MiB), as a real broker has a limit. */
  readonly maxMessageBytes?: number;
  /** Where time comes from (delayed redelivery, request timeouts); real time by default. */
  readonly clock?: Clock;
  /** An address to show in generated docs; a user or password in it is never shown. */
  readonly url?: string;
}

/** The server, from configuration alone: `memory`, and the `url` option's host without its user. */
export function describeMemoryServer(options: MemoryBrokerOptions): ServerDescription {
  const url = options.url;
  return {
    protocol: "memory",
    description: "in-process memory broker",
    ...(url === undefined ? {} : { host: hostFromUrl(url) }),
  };
}
