import type { LinkChange } from "@ruststream/core/broker";
import type { Cluster, Redis } from "ioredis";
import type { ResolvedCluster } from "./connectionOptions.js";
import { call, connectionLost } from "./ioredisClients.js";
import type { BlockingLink } from "./link.js";
import type { Arg, Reply } from "./resp.js";
import { redirection, SlotConnection, SlotConnectionClosed } from "./slotConnection.js";
import { hashSlot } from "./slots.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers a cluster gives while it heals (a failover, a slot on its way): the command did not run. */
const healing = /^(TRYAGAIN|CLUSTERDOWN)\b/;

/**
 * A blocking reader's connection on a cluster: on the master serving its key's slot, following the
 * slot. A command answered MOVED goes again to the node named (after a migration or a failover, a
 * blocked read is answered MOVED once its slot is served elsewhere); ASK sends it once to the
 * importing node, after `ASKING`; TRYAGAIN and CLUSTERDOWN wait a moment and try again. A cut counts
 * as a reconnect (`reconnects`), and the command goes again on the connection opened where the slot
 * is then.
 */
export class ClusterBlockingLink implements BlockingLink {
  readonly #cluster: Cluster;
  readonly #connection: SlotConnection;
  /** The connection's id on its node, for `CLIENT UNBLOCK`; fetched on each new connection. */
  #id: { client: Redis; id: number } | undefined;
  #closed = false;

  constructor(
    cluster: Cluster,
    settings: ResolvedCluster,
    key: string,
    onState: (change: LinkChange) => void,
  ) {
    this.#cluster = cluster;
    this.#connection = new SlotConnection(cluster, settings, hashSlot(key), "reader", {
      onOpen: async (client) => {
        this.#id = { client, id: Number(await client.client("ID")) };
      },
      onState,
    });
  }

  /** Opens the connection, so a reader that cannot reach its node fails at subscribe. */
  async init(): Promise<void> {
    await this.#connection.client();
  }

  get reconnects(): number {
    return this.#connection.cuts;
  }

  async call(name: string, args: readonly Arg[]): Promise<Reply> {
    let asking = false;
    for (let redirects = 0; ; redirects++) {
      let client: Redis;
      try {
        client = await this.#connection.client();
      } catch (error) {
        if (error instanceof SlotConnectionClosed) return null;
        throw error;
      }
      try {
        if (!asking) return await call(client, name, args);
        // ASKING holds for the next command only: both leave in this order on the connection.
        const ask = client.asking();
        const reply = call(client, name, args);
        await ask;
        return await reply;
      } catch (error) {
        if (this.#closed) return null;
        const moved = redirection(error);
        asking = moved?.kind === "ASK";
        if (moved !== undefined) {
          // A redirection loop while the cluster converges: let it settle between rounds.
          if (redirects > 2) await sleep(100);
          this.#connection.moveTo(moved.address);
          continue;
        }
        if (connectionLost(error) || (error instanceof Error && healing.test(error.message))) {
          await sleep(100);
          continue;
        }
        throw error;
      }
    }
  }

  async interrupt(): Promise<void> {
    const address = this.#connection.address;
    const id = this.#id;
    if (address === undefined || id === undefined) return;
    // The cluster client's own connection to that node sends the UNBLOCK.
    const node = this.#cluster
      .nodes("all")
      .find((n) => `${n.options.host}:${n.options.port}` === address);
    if (node === undefined) return;
    try {
      await node.call("CLIENT", "UNBLOCK", String(id.id));
    } catch {
      // An ACL user without CLIENT: the blocked read ends at its own timeout instead.
    }
  }

  async close(): Promise<void> {
    await this.interrupt();
    this.#closed = true;
    await this.#connection.close();
  }
}
