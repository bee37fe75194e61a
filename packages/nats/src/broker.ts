import {
  type Broker,
  type ConnectOptions,
  type DescribesServer,
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
import { connectLink } from "./client/natsLink.js";
import { ConnectedNatsBroker } from "./connection.js";
import { InProcessNats } from "./inProcess/inProcessNats.js";
import { checkOptions, describeNatsServer, type NatsBrokerOptions } from "./options.js";

/**
 * The NATS broker: the constructor checks and records configuration, nothing else (no I/O, no
 * timers), so an app can be built and described without connecting.
 */
export class NatsBroker
  implements Broker<ConnectedNatsBroker>, InProcessBroker<ConnectedNatsBroker>, DescribesServer
{
  readonly [brokerMark] = "nats";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: NatsBrokerOptions;
  /** The in-process stand-in of the server: one per broker object, shared by its connections. */
  #inProcess: InProcessNats | undefined;

  constructor(options: NatsBrokerOptions) {
    checkOptions(options);
    this.#options = options;
  }

  describeServer(): ServerDescription {
    return describeNatsServer(this.#options);
  }

  async connect(options: ConnectOptions = {}): Promise<ConnectedNatsBroker> {
    const link = await connectLink(this.#options, options.app?.name, options.logger);
    return new ConnectedNatsBroker(link, this.#options, {
      coordinator: noCoordinator,
      clock: systemClock,
      inProcess: false,
      onState: options.onState,
      onBackground: options.onBackground,
      logger: options.logger,
    });
  }

  /**
   * The same broker over the in-process stand-in of its server, counting for the test's
   * coordinator: the same descriptors, policies and code above the link, so TestApp runs the
   * production app unchanged.
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedNatsBroker> {
    this.#inProcess ??= new InProcessNats(options.clock);
    return new ConnectedNatsBroker(this.#inProcess.link(options.coordinator), this.#options, {
      coordinator: options.coordinator,
      clock: options.clock,
      inProcess: true,
      onState: options.onState,
      onBackground: options.onBackground,
      logger: options.logger,
    });
  }
}
