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
} from "@ruststream/core/broker";
import { AmqpLink } from "./client/amqpLink.js";
import { ConnectedRabbitBroker } from "./connection.js";
import type { InProcessRabbit } from "./inProcess/inProcessRabbit.js";
import {
  checkOptions,
  describeRabbitServer,
  linkOptions,
  type RabbitBrokerOptions,
} from "./options.js";

/**
 * A RabbitMQ broker before it connects: the constructor only checks and records its configuration
 * (no I/O, no timers). `connect()` opens our connection on amqplib; `connectInProcess()` runs the
 * same descriptors and policies against an in-process stand-in of the server, for tests.
 */
export class RabbitBroker
  implements Broker<ConnectedRabbitBroker>, InProcessBroker<ConnectedRabbitBroker>, DescribesServer
{
  readonly [brokerMark] = "rabbitmq";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly #options: RabbitBrokerOptions;
  #inProcess: InProcessRabbit | undefined;

  constructor(options: RabbitBrokerOptions) {
    checkOptions(options);
    this.#options = options;
  }

  /** The server as configured, before connecting: scheme and host, never the password. */
  describeServer(): ServerDescription {
    return describeRabbitServer(this.#options);
  }

  async connect(options?: ConnectOptions): Promise<ConnectedRabbitBroker> {
    const link = await AmqpLink.open(linkOptions(this.#options));
    return this.#withTopology(
      new ConnectedRabbitBroker(link, this.#options, {
        clock: this.#options.clock ?? systemClock,
        description: describeRabbitServer(this.#options),
        inProcess: false,
        onState: options?.onState,
      }),
    );
  }

  /**
   * The in-process mode: the same descriptors, policies and settlement code against a stand-in of
   * the server that lives in this broker object (so a second connection sees what the first left).
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedRabbitBroker> {
    const { InProcessRabbit } = await import("./inProcess/inProcessRabbit.js");
    this.#inProcess ??= new InProcessRabbit();
    const server = this.#inProcess;
    server.attach(options.clock, options.coordinator);
    return this.#withTopology(
      new ConnectedRabbitBroker(server.link(), this.#options, {
        clock: options.clock,
        description: { protocol: "amqp", description: "in-process stand-in of a RabbitMQ vhost" },
        inProcess: true,
        onState: options.onState,
      }),
    );
  }

  /**
   * The `topology` option declared (or checked) before the connection is handed out, so a reply
   * to a queue the service does not read has somewhere to go from the first delivery on. A refusal
   * closes the connection and is the connect's error.
   */
  async #withTopology(connected: ConnectedRabbitBroker): Promise<ConnectedRabbitBroker> {
    try {
      for (const item of this.#options.topology ?? []) {
        await connected.ensure(item.topology(), item.declare);
      }
    } catch (error) {
      await connected.shutdown();
      throw error;
    }
    return connected;
  }
}
