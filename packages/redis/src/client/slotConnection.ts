import type { LinkChange } from "@ruststream/core/broker";
import type { Cluster, Redis } from "ioredis";
import { refusesLogin } from "./clientStates.js";
import type { RedisAddress, ResolvedCluster } from "./connectionOptions.js";
import { nodeClient, ready } from "./ioredisClients.js";

// A cluster client shares one connection per node among all its commands, so a blocking read or a
// subscription, which holds its connection, gets one of its own: a SlotConnection. It goes where its
// slot is: to the master the cluster client's slot table names, to the node a MOVED or ASK answer
// names, and, after the connection was cut (the node died, a failover), to whichever master serves
// the slot then, asking the cluster for its slots again while it cannot connect.

/** Why opening stopped: the reader closed. */
export class SlotConnectionClosed extends Error {}

function parseAddress(text: string): RedisAddress {
  const at = text.lastIndexOf(":");
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(text.slice(at + 1)) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The node a `MOVED <slot> <host:port>` or `ASK <slot> <host:port>` error names, if it is one. */
export function redirection(
  error: unknown,
): { kind: "MOVED" | "ASK"; address: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  const [kind, , address] = error.message.split(" ");
  if ((kind === "MOVED" || kind === "ASK") && address !== undefined) return { kind, address };
  return undefined;
}

export class SlotConnection {
  readonly #cluster: Cluster;
  readonly #settings: ResolvedCluster;
  readonly #slot: number;
  readonly #role: string;
  /** Runs on each new connection before it is handed out (a subscriber subscribes there). */
  readonly #onOpen: (client: Redis) => Promise<void>;
  /** Opens the next connection as soon as one is cut (a subscriber), not at the next command. */
  readonly #keepOpen: boolean;
  /** Hears the connection cut, failing to open where the slot is, and open again. */
  readonly #onState: (change: LinkChange) => void;
  #current: { client: Redis; address: string } | undefined;
  #opening: Promise<Redis> | undefined;
  /** Where the next connection goes, when a redirection named it; else the slot's owner. */
  #next: string | undefined;
  #cuts = 0;
  #closed = false;

  constructor(
    cluster: Cluster,
    settings: ResolvedCluster,
    slot: number,
    role: string,
    options: {
      onOpen?: (client: Redis) => Promise<void>;
      keepOpen?: boolean;
      onState?: (change: LinkChange) => void;
    } = {},
  ) {
    this.#cluster = cluster;
    this.#settings = settings;
    this.#slot = slot;
    this.#role = role;
    this.#onOpen = options.onOpen ?? (async () => {});
    this.#keepOpen = options.keepOpen ?? false;
    this.#onState = options.onState ?? (() => {});
  }

  /** How many times a connection was cut under this one (not a move this side asked for). */
  get cuts(): number {
    return this.#cuts;
  }

  /** The `host:port` of the node the connection is on now, if it is open. */
  get address(): string | undefined {
    return this.#current?.address;
  }

  /** The connection, opened where the slot is when there is none; waits until one opens. */
  client(): Promise<Redis> {
    if (this.#current !== undefined) return Promise.resolve(this.#current.client);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return this.#opening;
  }

  /**
   * Leaves the node: the slot is at `address` (a MOVED or ASK answer), or somewhere the cluster
   * will say (none given). Nothing was in flight that the move could lose: a redirection is the
   * answer of the command it redirects, and a subscriber told its slot moved holds no reply.
   */
  moveTo(address: string | undefined): void {
    this.#next = address;
    const current = this.#current;
    this.#current = undefined;
    current?.client.disconnect();
    if (this.#keepOpen && !this.#closed) void this.client().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const current = this.#current;
    this.#current = undefined;
    current?.client.disconnect();
    await this.#opening?.catch(() => undefined);
  }

  async #open(): Promise<Redis> {
    for (let attempt = 0; ; attempt++) {
      if (this.#closed) throw new SlotConnectionClosed("the connection was closed");
      const address = this.#next ?? this.#owner();
      this.#next = undefined;
      const client = nodeClient(this.#settings, parseAddress(address), this.#role);
      try {
        await ready(client);
        await this.#onOpen(client);
      } catch (error) {
        client.disconnect();
        const moved = redirection(error);
        if (moved !== undefined) {
          this.#next = moved.address;
          continue;
        }
        // The node is gone or not serving yet: ask the cluster where the slot is now, and retry.
        const reason = `${address}: ${error instanceof Error ? error.message : String(error)}`;
        this.#onState(
          refusesLogin(error)
            ? { state: "lost", reason: `the server refused the login: ${reason}` }
            : { state: "reconnecting", reason },
        );
        await this.#refreshSlots();
        await sleep(Math.min(100 * (attempt + 1), 1000));
        continue;
      }
      if (this.#closed) {
        client.disconnect();
        throw new SlotConnectionClosed("the connection was closed");
      }
      this.#current = { client, address };
      client.once("end", () => this.#ended(client));
      this.#onState({ state: "connected" });
      return client;
    }
  }

  #ended(client: Redis): void {
    const current = this.#current;
    if (current?.client !== client) return; // moved or closed on purpose
    this.#current = undefined;
    this.#cuts++;
    this.#onState({ state: "reconnecting", reason: `the connection to ${current.address} closed` });
    if (this.#keepOpen && !this.#closed) void this.client().catch(() => undefined);
  }

  /** The master the cluster client believes serves the slot, else a seed node. */
  #owner(): string {
    const owner = this.#cluster.slots[this.#slot]?.[0];
    if (owner !== undefined) return owner;
    const seed = this.#settings.nodes[0]!;
    return `${seed.host}:${seed.port}`;
  }

  #refreshSlots(): Promise<void> {
    return new Promise((resolve) => this.#cluster.refreshSlotsCache(() => resolve()));
  }
}
