import { type Broker, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import {
  type ConnectedPulsarBroker,
  PulsarBroker,
  PulsarExclusive,
  PulsarFailover,
  PulsarKeyShared,
  PulsarShared,
  type PulsarSource,
} from "../src/index.js";
import { sharedCapabilities, singleCapabilities } from "./capabilities.js";
import { everySuite } from "./conformance.js";

// The in-process mode runs the broker's own code against a stand-in of the server; these are the
// same suites, with the same declarations, the real broker passes, so both answer alike.

const url = "pulsar://in-process.invalid:6650";

/** Connections of one in-process stand-in, as the suites' "new client of the same server". */
function inProcess(server: PulsarBroker): () => Broker<ConnectedPulsarBroker> {
  const broker: Broker<ConnectedPulsarBroker> = {
    [brokerMark]: "pulsar",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
  return () => broker;
}

const timing = { arrivalMs: 3000, silenceMs: 200 };

const kinds: [string, (name: string) => PulsarSource, typeof sharedCapabilities][] = [
  ["Shared", (name) => new PulsarShared(name, { subscription: "conformance" }), sharedCapabilities],
  [
    "Key_Shared",
    (name) => new PulsarKeyShared(name, { subscription: "conformance" }),
    sharedCapabilities,
  ],
  [
    "Exclusive",
    (name) => new PulsarExclusive(name, { subscription: "conformance" }),
    singleCapabilities,
  ],
  [
    "Failover",
    (name) => new PulsarFailover(name, { subscription: "conformance" }),
    singleCapabilities,
  ],
];

for (const [kind, makeSource, capabilities] of kinds) {
  describe(`${kind}, in-process`, () => {
    everySuite(inProcess(new PulsarBroker({ url })), makeSource, capabilities, timing);
    conformance.inProcessTransport({
      makeBroker: () => new PulsarBroker({ url }),
      makeSource,
      capabilities,
      timing,
    });
  });
}
