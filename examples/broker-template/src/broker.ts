import {
  type Broker,
  type ConnectOptions,
  type DescribesServer,
  RustStreamError,
  type ServerDescription,
} from "@ruststream/core";
import {
  brokerMark,
  describeMark,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
  noCoordinator,
  positive,
} from "@ruststream/core/broker";
import { ConnectedChannelBroker } from "./connection.js";
import {
  type ChannelBrokerOptions,
  defaultMaxMessageBytes,
  describeChannelServer,
} from "./options.js";
import { Hub, hubAt } from "./wire/hub.js";

/**
 * The broker: the constructor checks and records configuration, nothing else (no I/O, no timers),
 * so an app can be built and described without connecting.
 */
export class ChannelBroker
  implements
    Broker<ConnectedChannelBroker>,
    InProcessBroker<ConnectedChannelBroker>,
    DescribesServer
{
  readonly [brokerMark] = "channels";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: ChannelBrokerOptions;
  /** The in-process stand-in of the server: a hub of this broker object's own. */
  #inProcess: Hub | undefined;

  constructor(options: ChannelBrokerOptions) {
    if (typeof options?.address !== "string" || options.address === "") {
      throw new RustStreamError(
        "invalid-argument",
        'ChannelBroker needs an address: new ChannelBroker({ address: "hub-1" })',
      );
    }
    positive("maxMessageBytes", options.maxMessageBytes, defaultMaxMessageBytes);
    this.#options = options;
  }

  describeServer(): ServerDescription {
    return describeChannelServer(this.#options);
  }

  /**
   * `options.onState` hears the connection's state: a broker whose client can lose its server
   * reports each change (`reportState`, from a LinkStates its link keeps); a hub is never lost, so
   * this one only ever hears `closed`.
   */
  async connect(options?: ConnectOptions): Promise<ConnectedChannelBroker> {
    return new ConnectedChannelBroker(hubAt(this.#options.address).link(), this.#options, {
      coordinator: noCoordinator,
      inProcess: false,
      onState: options?.onState,
    });
  }

  /**
   * The same broker over the in-process stand-in of its server, counting for the test's
   * coordinator: the same descriptors, policies and code above the link, so TestApp runs the
   * production app unchanged.
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedChannelBroker> {
    this.#inProcess ??= new Hub();
    return new ConnectedChannelBroker(this.#inProcess.link(), this.#options, {
      coordinator: options.coordinator,
      inProcess: true,
      onState: options.onState,
    });
  }
}
