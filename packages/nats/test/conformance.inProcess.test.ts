import { type Broker, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import { type ConnectedNatsBroker, NatsBroker, type NatsSource } from "../src/index.js";
import {
  coreCapabilities,
  ephemeralPushCapabilities,
  jetStreamCapabilities,
  kvWatchCapabilities,
  orderedCapabilities,
  pushCapabilities,
} from "./capabilities.js";
import {
  coreSource,
  ephemeralPushSource,
  jetStreamSource,
  kvSource,
  orderedSource,
  pushSource,
} from "./sources.js";
import { everySuite } from "./suites.js";

// The in-process mode runs the broker's own code against a stand-in of the server; these are the
// same suites, with the same declarations, the real server passes, so both answer alike.

const servers = "nats://in-process.invalid:4222";

/** Connections of one in-process stand-in, as the suites' "new client of the same server". */
function inProcess(server: NatsBroker): () => Broker<ConnectedNatsBroker> {
  const broker: Broker<ConnectedNatsBroker> = {
    [brokerMark]: "nats",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
  return () => broker;
}

const timing = { arrivalMs: 3000, silenceMs: 200 };

const kinds: [string, (name: string) => NatsSource, typeof coreCapabilities, boolean][] = [
  ["core NATS", coreSource, coreCapabilities, false],
  ["JetStream", jetStreamSource, jetStreamCapabilities, true],
  ["JetStream ordered", orderedSource, orderedCapabilities, true],
  ["JetStream push", pushSource, pushCapabilities, true],
  ["JetStream ephemeral push", ephemeralPushSource, ephemeralPushCapabilities, true],
];

describe("KV watch, in-process", () => {
  // Not the in-process transport suite: it publishes through the app's own publisher, by name,
  // which a watch of a bucket does not receive (a put is a publish to the key's subject).
  everySuite(inProcess(new NatsBroker({ servers })), kvSource, kvWatchCapabilities, timing, {
    jetStream: true,
    kv: true,
  });
});

for (const [kind, makeSource, capabilities, jetStream] of kinds) {
  describe(`${kind}, in-process`, () => {
    everySuite(inProcess(new NatsBroker({ servers })), makeSource, capabilities, timing, {
      jetStream,
    });
    conformance.inProcessTransport({
      makeBroker: () => new NatsBroker({ servers }),
      makeSource,
      capabilities,
      timing,
    });
  });
}
