import { type Broker, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import {
  type ConnectedRabbitBroker,
  RabbitBroker,
  RabbitQueue,
  RabbitQuorumQueue,
  type RabbitSource,
  RabbitStream,
} from "../src/index.js";
import { classicCapabilities, quorumCapabilities, streamCapabilities } from "./capabilities.js";
import { everySuite } from "./conformance.js";

// The in-process mode runs the broker's own code against a stand-in of the server; these are the
// same suites, with the same declarations, the real node passes, so both answer alike.

const url = "amqp://in-process.invalid:5672";

/** Connections of one in-process stand-in, as the suites' "new client of the same server". */
function inProcess(server: RabbitBroker): () => Broker<ConnectedRabbitBroker> {
  const broker: Broker<ConnectedRabbitBroker> = {
    [brokerMark]: "rabbitmq",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
  return () => broker;
}

const timing = { arrivalMs: 3000, silenceMs: 200 };

const kinds: [string, (name: string) => RabbitSource, typeof classicCapabilities][] = [
  ["classic queue", (name) => new RabbitQueue(name), classicCapabilities],
  ["quorum queue", (name) => new RabbitQuorumQueue(name), quorumCapabilities],
  ["stream queue", (name) => new RabbitStream(name), streamCapabilities],
];

for (const [kind, makeSource, capabilities] of kinds) {
  describe(`${kind}, in-process`, () => {
    everySuite(
      inProcess(new RabbitBroker({ url, declare: true })),
      makeSource,
      capabilities,
      timing,
    );
    conformance.inProcessTransport({
      makeBroker: () => new RabbitBroker({ url, declare: true }),
      makeSource,
      capabilities,
      timing,
    });
  });
}
