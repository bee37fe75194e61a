import { basename } from "node:path";
import { RustStreamError, type ServerDescription } from "@ruststream/core";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back. Beside them, what is read from them alone: the server's description, and the error a bad
// one fails with.

export interface FileBrokerOptions {
  /** The `.ss` file; created (with its folder) on connect unless `existingOnly`. */
  readonly path: string;
  /**
   * The consumer name a bare subscriber name subscribes as. With it, `b.subscriber("orders")` is a
   * durable `tracked` consumer that resumes after a restart; without it, a bare name reads live
   * from the end and keeps no position.
   */
  readonly consumer?: string;
  /** Bytes between beacons in a new file: a positive multiple of 1024 (default 1 MiB). */
  readonly beaconInterval?: number;
  /** The largest message a publish writes, header envelope included (default 16 MiB). */
  readonly maxMessageBytes?: number;
  /** Fail to connect when the file does not exist, instead of creating it. */
  readonly existingOnly?: boolean;
  /** Write the end-of-stream marker at shutdown, so replays of the file complete. */
  readonly endWithEos?: boolean;
}

/** Docs name the file, not where it lives: a path can say more about a host than docs should. */
export function describeFile(path: string): ServerDescription {
  return { protocol: "file", description: `SeaStreamer stream file ${basename(path)}` };
}

/** The error a bad option, path or name fails with. */
export function invalid(message: string): RustStreamError {
  return new RustStreamError("invalid-argument", message);
}
