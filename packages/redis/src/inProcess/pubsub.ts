import type { PubSubLink, PubSubListener } from "../client/link.js";
import type { Reply } from "../client/resp.js";
import { buf, type Commands, type Server, str } from "./command.js";
import type { Channel } from "./memoryValues.js";

// Pub/Sub: a publish reaches the channels and patterns subscribed at that moment, each counted for
// the coordinator until its subscriber is done with it; nothing is kept for anyone else.

function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const ch of glob) {
    if (ch === "*") source += ".*";
    else if (ch === "?") source += ".";
    else source += ch.replace(/[.+^${}()|\\[\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

function publish(server: Server, channel: string, message: Buffer): Reply {
  let receivers = 0;
  for (const c of server.channels) {
    if (c.pattern === undefined ? c.name !== channel : !c.pattern.test(channel)) continue;
    server.coordinator.enqueued();
    c.listener(channel, Buffer.from(message));
    receivers++;
  }
  return receivers;
}

export const pubsubCommands: Commands = {
  PUBLISH: (server, args) => publish(server, str(args[0]), buf(args[1] ?? "")),
};

/**
 * A subscriber connection: what it subscribes is added to the server's channels, and to `mine` (the
 * channels of the link that opened it, dropped when that link closes).
 */
export function subscriberLink(
  server: Server,
  listener: PubSubListener,
  mine: Set<Channel>,
): PubSubLink {
  const opened: Channel[] = [];
  return {
    subscribe: async (name, pattern) => {
      const channel = { name, pattern: pattern ? globToRegExp(name) : undefined, listener };
      opened.push(channel);
      mine.add(channel);
      server.channels.add(channel);
    },
    close: async () => {
      for (const c of opened) {
        server.channels.delete(c);
        mine.delete(c);
      }
    },
  };
}
