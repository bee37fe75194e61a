import {
  type Broker,
  type ConnectOptions,
  type DescribesServer,
  RustStreamError,
  type ServerDescription,
  systemClock,
} from "@ruststream/core";
import {
  brokerMark,
  describeMark,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  noCoordinator,
} from "@ruststream/core/broker";
import { type ResolvedConnection, resolveConnection } from "./client/connectionOptions.js";
import { IoredisLink } from "./client/ioredisLink.js";
import { ConnectedRedisBroker } from "./connection.js";
import { describeRedisServer, type RedisBrokerOptions } from "./options.js";

/**
 * A Redis broker before it connects: the constructor only checks and records its configuration.
 * `connect()` reaches the server; `connectInProcess()` runs the same descriptors against an
 * in-process stand-in of the server, for tests.
 */
export class RedisBroker
  implements Broker<ConnectedRedisBroker>, InProcessBroker<ConnectedRedisBroker>, DescribesServer
{
  readonly [brokerMark] = "redis";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: RedisBrokerOptions;
  readonly #settings: ResolvedConnection;
  #inProcessServer: import("./inProcess/memoryRedis.js").MemoryRedis | undefined;

  constructor(options: RedisBrokerOptions = {}) {
    const maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    if (!Number.isSafeInteger(maxMessageBytes) || maxMessageBytes < 1) {
      throw new RustStreamError(
        "invalid-argument",
        `maxMessageBytes: ${options.maxMessageBytes}; give a whole number of bytes, 1 or more`,
      );
    }
    if (
      options.maxLen !== undefined &&
      !(Number.isSafeInteger(options.maxLen) && options.maxLen >= 1)
    ) {
      throw new RustStreamError("invalid-argument", `maxLen: ${options.maxLen}; give 1 or more`);
    }
    if (options.group !== undefined && options.group.length === 0) {
      throw new RustStreamError("invalid-argument", "group cannot be empty: give the app's name");
    }
    this.#options = options;
    this.#settings = resolveConnection(options);
  }

  /** The server as configured, before connecting: scheme and host, never the user or password. */
  describeServer(): ServerDescription {
    return describeRedisServer(this.#settings, undefined);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedRedisBroker> {
    const link = await IoredisLink.connect(this.#settings);
    return new ConnectedRedisBroker(link, this.#options, this.#settings, {
      clock: this.#options.clock ?? systemClock,
      coordinator: noCoordinator,
      group: this.#options.group ?? options?.app?.name,
      version: link.serverVersion,
      inProcess: false,
      onState: options?.onState,
    });
  }

  /**
   * The in-process mode: the same descriptors, policies and settlement code against a stand-in of
   * the server that lives in this broker object (so a second connection sees what the first left).
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedRedisBroker> {
    const { MemoryRedis } = await import("./inProcess/memoryRedis.js");
    // A broker configured for a cluster gets a stand-in that answers as one where it matters.
    const settings = this.#settings;
    this.#inProcessServer ??= new MemoryRedis(
      settings.kind === "cluster" ? { pubsub: settings.pubsub ?? "sharded" } : undefined,
    );
    this.#inProcessServer.attach(options.clock, options.coordinator);
    return new ConnectedRedisBroker(this.#inProcessServer.link(), this.#options, this.#settings, {
      clock: options.clock,
      coordinator: options.coordinator,
      group: this.#options.group ?? options.app?.name,
      version: undefined,
      inProcess: true,
      onState: options.onState,
    });
  }
}
