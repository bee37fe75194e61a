import type { Broker } from "@ruststream/core";
import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import {
  type ConnectedNatsBroker,
  JetStreamPosition,
  NatsPublish,
  type NatsSource,
} from "../src/index.js";
import { kvPublisher, storingPublisher } from "./sources.js";

/** Every suite that fits, against `makeBroker`'s clients, for one kind of source. */
export function everySuite(
  makeBroker: () => Broker<ConnectedNatsBroker>,
  makeSource: (name: string) => NatsSource,
  capabilities: Capabilities,
  timing: { arrivalMs: number; silenceMs: number },
  options: { readonly jetStream: boolean; readonly kv?: boolean },
): void {
  const factories = {
    makeBroker,
    makeSource,
    capabilities,
    timing,
    // JetStream publishes resolve on the stream's acknowledgement; core ones once the server has them.
    makePublisher: (connected: ConnectedNatsBroker) =>
      options.kv === true
        ? kvPublisher(connected)
        : options.jetStream
          ? storingPublisher(connected)
          : new NatsPublish().pair(connected),
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking({
    ...factories,
    // A watch's subscription is named `<bucket>:<keys>`; its stream is the bucket's.
    unknownPosition: (subscription) =>
      new JetStreamPosition(
        options.kv === true ? `KV_${subscription.name.split(":")[0]}` : subscription.name,
        10n ** 15n,
      ),
  });
  conformance.transactions(factories);
  conformance.requestReply(factories);
  // A watch makes no retry copies (the server requeues; a copy put to a key would be a new put).
  if (options.kv !== true) conformance.redeliveryAddress(factories);
}
