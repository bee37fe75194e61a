import type { RawMessage } from "@ruststream/core";
import { channelHeaderNames } from "../names.js";
import { Hub } from "../wire/hub.js";
import type { Link } from "../wire/link.js";

/**
 * The in-process stand-in of the server: a hub of the broker object's own (so a second connection
 * of one broker sees what the first did, and two brokers share nothing), and a record of every
 * message sent through it, per channel, for `published()`.
 */
export class InProcessServer {
  readonly #hub = new Hub();
  readonly #published = new Map<string, RawMessage[]>();

  /** A connection that records what it sends. */
  link(): Link {
    const link = this.#hub.link();
    return {
      send: (frame) => {
        let list = this.#published.get(frame.channel);
        if (list === undefined) {
          list = [];
          this.#published.set(frame.channel, list);
        }
        list.push({
          name: frame.channel,
          payload: frame.payload,
          headers: frame.headers,
          partitionKey: frame.headers.get(channelHeaderNames.partitionKey),
        });
        return link.send(frame);
      },
      listen: (channel, onFrame) => link.listen(channel, onFrame),
      close: () => link.close(),
    };
  }

  published(channel: string): readonly RawMessage[] {
    return [...(this.#published.get(channel) ?? [])];
  }
}
