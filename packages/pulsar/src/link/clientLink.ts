// The link over the wire client: a real Pulsar broker behind the broker's Link.
import { RustStreamError } from "@ruststream/core";
import type { LinkStates } from "@ruststream/core/broker";
import { type ClientOptions, PulsarClient } from "../wire/client.js";
import type { ConsumerOptions } from "../wire/consumer/consumerOptions.js";
import type { ProducerOptions } from "../wire/producer/producerOptions.js";
import type { Link, LinkConsumer, LinkProducer } from "./link.js";

export class ClientLink implements Link {
  readonly #client: PulsarClient;
  /** The broker's version, from the handshake (`Pulsar Server4.0.7`). */
  readonly serverVersion: string;

  private constructor(client: PulsarClient, serverVersion: string) {
    this.#client = client;
    this.serverVersion = serverVersion;
  }

  /**
   * Opens the first connection (handshake, token, TLS) so a wrong address or credential fails
   * here, with the fix in the message, rather than at the first subscribe.
   */
  static async open(options: ClientOptions): Promise<ClientLink> {
    const client = new PulsarClient(options);
    const address = client.serviceAddress();
    try {
      const connection = await client.connection(address);
      return new ClientLink(client, connection.serverVersion);
    } catch (error) {
      await client.close();
      const cause = error instanceof Error ? error.message : String(error);
      const hint = /authenticat/i.test(cause)
        ? "the token was refused: check the token option (a JWT the broker's key signed)"
        : address.tls
          ? "check the address, and that tls.ca holds the CA that signed the broker's certificate"
          : "check the address and that the broker runs (pulsar:// for plain, pulsar+ssl:// for TLS)";
      throw new RustStreamError(
        "broker-failure",
        `cannot connect to Pulsar at ${address.url}: ${cause}; ${hint}`,
        { cause: error },
      );
    }
  }

  subscribe(options: ConsumerOptions): Promise<LinkConsumer> {
    return this.#client.subscribe(options);
  }

  createProducer(options: ProducerOptions): Promise<LinkProducer> {
    return this.#client.createProducer(options);
  }

  close(): Promise<void> {
    return this.#client.close();
  }

  get states(): LinkStates {
    return this.#client.states;
  }
}
