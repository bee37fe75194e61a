import type { LinkChange } from "@ruststream/core/broker";
import type { Cluster, Redis } from "ioredis";
import type { ResolvedCluster } from "./connectionOptions.js";
import { quit } from "./ioredisClients.js";
import type { PubSubLink, PubSubListener } from "./link.js";
import { SlotConnection } from "./slotConnection.js";
import { hashSlot } from "./slots.js";

// Subscriber connections: on one server or behind Sentinel a connection ioredis brings back and
// subscribes again after a cut; on a cluster a connection of its own that goes where its channel's
// slot is (SlotConnection), subscribing again on each node it opens on.

/**
 * A channel's name from its bytes, decoded only when it differs from the last one: a subscriber's
 * messages nearly always name the same channel, and decoding it per message was a few percent of a
 * subscriber's CPU. The last bytes are copied, so no socket chunk is kept alive.
 */
function channelNames(): (channel: Buffer) => string {
  let lastBytes = Buffer.alloc(0);
  let lastName = "";
  return (channel) => {
    const length = channel.length;
    if (length === lastBytes.length && length > 0) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (channel[i] !== lastBytes[i]) {
          same = false;
          break;
        }
      }
      if (same) return lastName;
    }
    lastName = channel.toString("utf8");
    lastBytes = Buffer.from(channel);
    return lastName;
  };
}

/**
 * Hands `client`'s messages to `listener`: a named subscription's are all on its channel, whose name
 * needs no decoding; a pattern's carry the channel each came on.
 */
function listen(client: Redis, channel: string, pattern: boolean, listener: PubSubListener): void {
  if (pattern) {
    const channelName = channelNames();
    client.on("pmessageBuffer", (_pattern: Buffer, on: Buffer, message: Buffer) =>
      listener(channelName(on), message),
    );
  } else {
    client.on("messageBuffer", (_on: Buffer, message: Buffer) => listener(channel, message));
    client.on("smessageBuffer", (_on: Buffer, message: Buffer) => listener(channel, message));
  }
}

/** Subscribes `client` (one server or the master behind Sentinel), which ioredis resubscribes. */
export async function serverSubscriber(
  client: Redis,
  channel: string,
  pattern: boolean,
  listener: PubSubListener,
): Promise<PubSubLink> {
  listen(client, channel, pattern, listener);
  try {
    if (pattern) await client.psubscribe(channel);
    else await client.subscribe(channel);
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return { close: () => quit(client) };
}

/**
 * A subscriber on a cluster. Sharded: `SSUBSCRIBE` on the master serving the channel's slot, which
 * alone carries its messages; when the slot moves that node unsubscribes it (ioredis reports the
 * unasked `SUNSUBSCRIBE` as "moved") and the connection goes to the new owner. Classic: `SUBSCRIBE`
 * or `PSUBSCRIBE` on a master (every node carries every classic message; the channel's slot picks
 * one). Either way a cut connection opens again at once where the slot is, and subscribes again:
 * what was published meanwhile is lost, as Pub/Sub loses it across any cut.
 */
export async function clusterSubscriber(
  cluster: Cluster,
  settings: ResolvedCluster,
  sharded: boolean,
  channel: string,
  pattern: boolean,
  listener: PubSubListener,
  onState: (change: LinkChange) => void,
): Promise<PubSubLink> {
  const connection: SlotConnection = new SlotConnection(
    cluster,
    settings,
    hashSlot(channel),
    "subscriber",
    {
      keepOpen: true,
      onOpen: async (client) => {
        listen(client, channel, pattern, listener);
        if (sharded) {
          client.on("moved", () => connection.moveTo(undefined));
          await client.ssubscribe(channel);
        } else if (pattern) {
          await client.psubscribe(channel);
        } else {
          await client.subscribe(channel);
        }
      },
      onState,
    },
  );
  await connection.client();
  return { close: () => connection.close() };
}
