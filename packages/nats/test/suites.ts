import type { Broker } from "@ruststream/core";
import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import {
  type ConnectedNatsBroker,
  JetStreamPosition,
  NatsPublish,
  type NatsSource,
} from "../src/index.js";
import { storingPublisher } from "./sources.js";

/** Every suite that fits, against `makeBroker`'s clients, for one kind of source. */
export function everySuite(
  makeBroker: () => Broker<ConnectedNatsBroker>,
  makeSource: (name: string) => NatsSource,
  capabilities: Capabilities,
  timing: { arrivalMs: number; silenceMs: number },
  options: { readonly jetStream: boolean },
): void {
  const factories = {
    makeBroker,
    makeSource,
    capabilities,
    timing,
    // JetStream publishes resolve on the stream's acknowledgement; core ones once the server has them.
    makePublisher: (connected: ConnectedNatsBroker) =>
      options.jetStream ? storingPublisher(connected) : new NatsPublish().pair(connected),
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking({
    ...factories,
    unknownPosition: (subscription) => new JetStreamPosition(subscription.name, 10n ** 15n),
  });
  conformance.transactions(factories);
  conformance.requestReply(factories);
  conformance.redeliveryAddress(factories);
}
