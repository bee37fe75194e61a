import type { Frame, Link } from "./link.js";

/**
 * Stands in for the server a real broker package reaches over the network: channels and their
 * listeners, fire and forget. A hub is found by its address, as a server is by its host and port.
 */
export class Hub {
  readonly #channels = new Map<string, Set<(frame: Frame) => void>>();

  /** A client connection to this hub. */
  link(): Link {
    const mine = new Set<() => void>();
    let open = true;
    return {
      send: (frame) => (open ? this.#send(frame) : 0),
      listen: (channel, onFrame) => {
        const unlisten = this.#listen(channel, onFrame);
        mine.add(unlisten);
        return () => {
          mine.delete(unlisten);
          unlisten();
        };
      },
      close: () => {
        open = false;
        for (const unlisten of mine) unlisten();
        mine.clear();
      },
    };
  }

  #send(frame: Frame): number {
    const listeners = this.#channels.get(frame.channel);
    if (listeners === undefined) return 0;
    for (const onFrame of [...listeners]) onFrame(frame);
    return listeners.size;
  }

  #listen(channel: string, onFrame: (frame: Frame) => void): () => void {
    let listeners = this.#channels.get(channel);
    if (listeners === undefined) {
      listeners = new Set();
      this.#channels.set(channel, listeners);
    }
    listeners.add(onFrame);
    return () => {
      listeners.delete(onFrame);
      if (listeners.size === 0) this.#channels.delete(channel);
    };
  }
}

const hubs = new Map<string, Hub>();

/** The hub at `address`, as if reached over the network: every broker given it shares it. */
export function hubAt(address: string): Hub {
  let hub = hubs.get(address);
  if (hub === undefined) {
    hub = new Hub();
    hubs.set(address, hub);
  }
  return hub;
}
