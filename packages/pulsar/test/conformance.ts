import type { Broker } from "@ruststream/core";
import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import {
  type ConnectedPulsarBroker,
  PulsarBroker,
  PulsarMessagePosition,
  type PulsarSource,
} from "../src/index.js";
import { MessageId } from "../src/wire/index.js";
import { signToken } from "./env.js";

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

/**
 * The credentials suite on the real broker: a real connection carrying a token the broker's key
 * signed, the suite's secret among its claims.
 */
export function credentialsSuite(makeSource: (name: string) => PulsarSource): void {
  conformance.credentials({
    makeBroker: (secret) =>
      new PulsarBroker({ url: requireEnv("PULSAR_TOKEN_URL"), token: signToken({ sub: secret }) }),
    makeSource,
  });
}
