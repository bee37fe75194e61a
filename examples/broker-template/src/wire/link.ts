import type { ReadonlyHeaderMap } from "@ruststream/core";

/** One message on the wire: what a publish sends and a listener receives, owned by the wire. */
export interface Frame {
  readonly channel: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
}

/**
 * What the broker needs from its connection to the server: the only place it meets the wire. A
 * network broker implements it over its client library or protocol (see @ruststream/redis's link
 * over ioredis); the in-process mode implements it over a stand-in of the server, so everything
 * above this interface runs unchanged in TestApp.
 */
export interface Link {
  /** Sends a frame to every listener of its channel; answers how many it reached. */
  send(frame: Frame): number;
  /** Listens to a channel until the returned function is called. */
  listen(channel: string, onFrame: (frame: Frame) => void): () => void;
  /** Closes the connection: no more sends or frames. */
  close(): void;
}
