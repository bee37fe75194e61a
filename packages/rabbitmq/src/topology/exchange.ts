import { RustStreamError } from "@ruststream/core";
import { bindingSpec, type ExchangeRef, type RabbitBinding } from "./binding.js";
import {
  type ExchangeSpec,
  type ExchangeType,
  emptyTopology,
  exchangeTypes,
  mergeTopology,
  type Table,
  type Topology,
} from "./topology.js";

export interface RabbitExchangeOptions {
  /** `direct` (default), `topic`, `fanout`, `headers`, or `x-consistent-hash` (its plugin on). */
  readonly type?: ExchangeType;
  /** Survives a restart of the server (default true). */
  readonly durable?: boolean;
  /** Deleted once its last binding is (default false). */
  readonly autoDelete?: boolean;
  /** Takes no publishes, only what other exchanges route to it (default false). */
  readonly internal?: boolean;
  readonly arguments?: Table;
  /** Exchange-to-exchange bindings: this exchange receives what each of these routes to it. */
  readonly bindings?: readonly RabbitBinding[];
}

/**
 * An exchange, as configuration: publish policies publish to it, queues and other exchanges bind
 * to it. Declared or checked with whatever names it (the broker's `declare` decides which).
 */
export class RabbitExchange implements ExchangeRef {
  readonly name: string;
  readonly spec: ExchangeSpec;
  readonly #bindings: readonly RabbitBinding[];

  constructor(name: string, options: RabbitExchangeOptions = {}) {
    if (typeof name !== "string" || name === "" || name.startsWith("amq.")) {
      throw new RustStreamError(
        "invalid-argument",
        `an exchange needs a name of its own (not empty, not amq.*, which the server keeps): got "${String(name)}"; to publish to a built-in one, give its name to RabbitPublish`,
      );
    }
    const type = options.type ?? "direct";
    if (!exchangeTypes.includes(type)) {
      throw new RustStreamError(
        "invalid-argument",
        `exchange "${name}": type ${String(type)}; give one of ${exchangeTypes.join(", ")}`,
      );
    }
    this.name = name;
    this.spec = {
      name,
      type,
      durable: options.durable ?? true,
      autoDelete: options.autoDelete ?? false,
      internal: options.internal ?? false,
      arguments: options.arguments ?? {},
    };
    this.#bindings = options.bindings ?? [];
    // Checked now, so a mistake shows where the exchange is described.
    this.topology();
  }

  /** This exchange, the exchanges it binds to (where described here) and its bindings. */
  topology(): Topology {
    let topology: Topology = { exchanges: [this.spec], queues: [], bindings: [] };
    for (const binding of this.#bindings) {
      const { spec, exchange } = bindingSpec(binding, this.name, "exchange");
      topology = mergeTopology(exchange ?? emptyTopology, topology);
      topology = mergeTopology(topology, { exchanges: [], queues: [], bindings: [spec] });
    }
    return topology;
  }
}
