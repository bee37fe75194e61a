import { type PublishPolicy, RustStreamError } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { type PublisherHost, RabbitPublisher } from "./publisher.js";
import type { RabbitExchange } from "./topology/exchange.js";
import type { Topology } from "./topology/topology.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "rabbitmq", label: "RabbitMQ", broker: "RabbitBroker" };

export interface RabbitPublishPolicyOptions {
  /**
   * Where messages go: an exchange this package describes (declared or checked when paired), or
   * the name of one; default the default exchange, where a message's name is a queue's.
   */
  readonly exchange?: RabbitExchange | string;
  /** An unroutable message is an error naming the exchange and routing key (default true). */
  readonly mandatory?: boolean;
  /** Delivery mode 2: a durable queue writes it to disk (default true). */
  readonly persistent?: boolean;
  /** Declare the exchange when paired (true) or check it (false); default the broker's `declare`. */
  readonly declare?: boolean;
}

/** What pairing needs of the connection beyond publishing. */
interface PairingHost extends PublisherHost {
  /** Declares (`declare`), or checks, a topology; undefined: the broker's option. */
  ensure(topology: Topology, declare: boolean | undefined): Promise<void>;
}

/**
 * The publish policy: configuration only, paired with a connection at startup, where its exchange
 * is declared or checked. It takes any connection and checks the brand.
 */
export class RabbitPublish implements PublishPolicy<object, RabbitPublisher> {
  readonly [policyMark] = "rabbitmq";
  readonly #options: RabbitPublishPolicyOptions;

  constructor(options: RabbitPublishPolicyOptions = {}) {
    const exchange = options.exchange;
    if (
      exchange !== undefined &&
      typeof exchange !== "string" &&
      typeof exchange?.topology !== "function"
    ) {
      throw new RustStreamError(
        "invalid-argument",
        "RabbitPublish's exchange: give a RabbitExchange or an exchange's name",
      );
    }
    this.#options = options;
  }

  async pair(connected: object): Promise<RabbitPublisher> {
    const host = pairedHost<PairingHost>(connected, owner, "send");
    host.assertOpen();
    const exchange = this.#options.exchange;
    if (exchange !== undefined && typeof exchange !== "string") {
      await host.ensure(exchange.topology(), this.#options.declare);
    }
    return new RabbitPublisher(host, {
      exchange:
        exchange === undefined ? "" : typeof exchange === "string" ? exchange : exchange.name,
      mandatory: this.#options.mandatory ?? true,
      persistent: this.#options.persistent ?? true,
    });
  }
}
