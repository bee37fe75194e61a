import type { PubSubLink, PubSubListener } from "../client/link.js";
import type { Reply } from "../client/resp.js";
import { buf, type Commands, type Server, str } from "./command.js";
import type { Channel } from "./memoryValues.js";

// Pub/Sub: a publish reaches the channels and patterns subscribed at that moment, each counted for
// the coordinator until its subscriber is done with it; nothing is kept for anyone else. Sharded
// channels (a cluster's `SSUBSCRIBE`) and classic ones never meet, as on the server.

function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const ch of glob) {
    if (ch === "*") source += ".*";
    else if (ch === "?") source += ".";
    else source += ch.replace(/[.+^${}()|\\[\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

function publish(server: Server, channel: string, message: Buffer, sharded: boolean): Reply {
  let receivers = 0;
  for (const c of server.channels) {
    if (c.sharded !== sharded) continue;
    if (c.pattern === undefined ? c.name !== channel : !c.pattern.test(channel)) continue;
    server.coordinator.enqueued();
    c.listener(channel, Buffer.from(message));
    receivers++;
  }
  return receivers;
}

export const pubsubCommands: Commands = {
  PUBLISH: (server, args) => publish(server, str(args[0]), buf(args[1] ?? ""), false),
  SPUBLISH: (server, args) => publish(server, str(args[0]), buf(args[1] ?? ""), true),
};

/**
 * A subscriber connection: its channel is added to the server's channels, and to `mine` (the
 * channels of the link that opened it, dropped when that link closes).
 */
export function subscriberLink(
  server: Server,
  subscription: { name: string; pattern: boolean; sharded: boolean },
  listener: PubSubListener,
  mine: Set<Channel>,
): PubSubLink {
  const { name, pattern, sharded } = subscription;
  const channel = { name, pattern: pattern ? globToRegExp(name) : undefined, sharded, listener };
  mine.add(channel);
  server.channels.add(channel);
  return {
    close: async () => {
      server.channels.delete(channel);
      mine.delete(channel);
    },
  };
}
