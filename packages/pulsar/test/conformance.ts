import type { Broker } from "@ruststream/core";
import type { Capabilities } from "@ruststream/testing";
import { conformance } from "@ruststream/testing";
import {
  type ConnectedPulsarBroker,
  MessageId,
  PulsarMessagePosition,
  type PulsarSource,
} from "../src/index.js";

/** Every suite, against `makeBroker`'s clients, for one descriptor kind. */
export function everySuite(
  makeBroker: () => Broker<ConnectedPulsarBroker>,
  makeSource: (name: string) => PulsarSource,
  capabilities: Capabilities,
  timing: { arrivalMs: number; silenceMs: number },
): void {
  const factories = { makeBroker, makeSource, capabilities, timing };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking({
    ...factories,
    unknownPosition: () => new PulsarMessagePosition(new MessageId(10n ** 15n, 0n)),
  });
  conformance.transactions(factories);
  conformance.requestReply(factories);
  const source = makeSource("probe");
  if (source.copies === "broker") {
    conformance.brokerMovedRetry({
      ...factories,
      makeSource: (name) => makeSource(name),
    });
  } else {
    conformance.redeliveryAddress(factories);
  }
}
