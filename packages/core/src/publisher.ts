import type { Bindings } from "./bindings.js";
import { policyMark } from "./marks.js";
import type { OutgoingMessage, Receipt } from "./message.js";

/** A live publisher, paired with a connected broker. */
export interface Publisher<TOptions = never> {
  /**
   * Resolves once the broker confirmed the message, or rejects with the reason. A message the broker
   * cannot take (too large, an option it cannot honour) rejects before anything is sent. After the
   * broker's shutdown every publish rejects with code `closed`.
   */
  publish(message: OutgoingMessage<TOptions>): Promise<Receipt>;
}

/**
 * How to publish, as plain configuration: built anywhere (a router, a config file) before any
 * connection exists, and paired with the connected broker at startup into a live {@link Publisher}.
 * Pairing may do real work (open a producer) and rejects with code `closed` after shutdown.
 */
export interface PublishPolicy<TConnected, TPublisher extends Publisher<never>> {
  /** The kind of broker this policy pairs with. */
  readonly [policyMark]: string;
  /** Per-broker facts for generated docs; see `Bindings`. */
  readonly bindings?: Bindings | undefined;
  pair(connected: TConnected): Promise<TPublisher>;
}
