import type { ServerDescription } from "@ruststream/core";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back. Beside them, what is read from them alone: the defaults, and the server's description.

export interface ChannelBrokerOptions {
  /** The hub to reach, as a network broker takes a host and port. */
  readonly address: string;
  /**
   * The credential the hub is reached with. Never shown: not in `describeServer()`, logs or docs,
   * which the credentials suite checks.
   */
  readonly token?: string;
  /** The largest payload a publish may carry (default 1 MiB). */
  readonly maxMessageBytes?: number;
}

/** The largest payload a publish may carry when `maxMessageBytes` is unset. */
export const defaultMaxMessageBytes = 1024 * 1024;

/** The server as configured, before or after connecting: never the token. */
export function describeChannelServer(options: ChannelBrokerOptions): ServerDescription {
  return { protocol: "channels", host: options.address };
}
