import {
  type Broker,
  type ConnectOptions,
  type DescribesServer,
  type Logger,
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
} from "@ruststream/core/broker";
import { ConnectedPulsarBroker } from "./connection.js";
import type { InProcessPulsar } from "./inProcess/inProcessPulsar.js";
import { ClientLink } from "./link/clientLink.js";
import type { PulsarBrokerOptions } from "./options.js";
import { type BrokerAddress, parseServiceUrl } from "./wire/serviceUrl.js";

function describePulsar(addresses: readonly BrokerAddress[], version?: string): ServerDescription {
  return {
    protocol: addresses[0]?.tls === true ? "pulsar+ssl" : "pulsar",
    host: addresses.map((a) => `${a.host}:${a.port}`).join(","),
    ...(version === undefined ? {} : { protocolVersion: version }),
  };
}

/**
 * A Pulsar broker before it connects: the constructor only checks and records its configuration.
 * `connect()` opens the first connection (handshake, token, TLS); `connectInProcess()` runs the
 * same descriptors against an in-process stand-in of the broker, for tests.
 */
export class PulsarBroker
  implements Broker<ConnectedPulsarBroker>, InProcessBroker<ConnectedPulsarBroker>, DescribesServer
{
  readonly [brokerMark] = "pulsar";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: PulsarBrokerOptions;
  readonly #addresses: readonly BrokerAddress[];
  #inProcess: InProcessPulsar | undefined;

  constructor(options: PulsarBrokerOptions) {
    if (typeof options?.url !== "string") {
      throw new RustStreamError(
        "invalid-argument",
        'PulsarBroker needs a url: new PulsarBroker({ url: "pulsar://127.0.0.1:6650" })',
      );
    }
    this.#addresses = parseServiceUrl(options.url);
    if (options.subscription !== undefined && options.subscription.length === 0) {
      throw new RustStreamError(
        "invalid-argument",
        "subscription cannot be empty: give the name the replicas share",
      );
    }
    const sizes = options.inProcess?.partitionedTopics ?? {};
    for (const [topic, partitions] of Object.entries(sizes)) {
      if (!Number.isSafeInteger(partitions) || partitions < 1) {
        throw new RustStreamError(
          "invalid-argument",
          `inProcess.partitionedTopics["${topic}"]: ${partitions}; give 1 or more partitions`,
        );
      }
    }
    this.#options = options;
  }

  /** The server as configured, before connecting: scheme and hosts, never the token. */
  describeServer(): ServerDescription {
    return describePulsar(this.#addresses);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedPulsarBroker> {
    const o = this.#options;
    const link = await ClientLink.open({
      serviceUrl: o.url,
      ...(o.token === undefined ? {} : { token: o.token }),
      ...(o.tls === undefined ? {} : { tls: o.tls }),
      ...(o.operationTimeoutMs === undefined ? {} : { operationTimeoutMs: o.operationTimeoutMs }),
      ...(o.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: o.connectTimeoutMs }),
      ...logger(o.logger ?? options?.logger),
    });
    const version = /(\d+\.\d+(?:\.\d+)?)/.exec(link.serverVersion)?.[1];
    return new ConnectedPulsarBroker(link, o, {
      clock: o.clock ?? systemClock,
      now: () => Date.now(),
      subscription: o.subscription ?? options?.app?.name,
      description: describePulsar(this.#addresses, version),
      inProcess: undefined,
      onState: options?.onState,
    });
  }

  /**
   * The in-process mode: the same descriptors, policies and settlement code against a stand-in of
   * the broker that lives in this broker object (so a second connection sees what the first left).
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedPulsarBroker> {
    const { InProcessPulsar } = await import("./inProcess/inProcessPulsar.js");
    this.#inProcess ??= new InProcessPulsar(this.#options.inProcess ?? {});
    const server = this.#inProcess;
    server.attach(options.clock, options.coordinator);
    return new ConnectedPulsarBroker(server.link(), this.#options, {
      clock: options.clock,
      now: () => server.now(),
      subscription: this.#options.subscription ?? options.app?.name,
      description: { protocol: "pulsar", description: "in-process stand-in of a Pulsar broker" },
      inProcess: server,
      onState: options.onState,
    });
  }
}

/** The client's logger option, where there is one to give. */
function logger(log: Logger | undefined): { logger?: Logger } {
  return log === undefined ? {} : { logger: log };
}
