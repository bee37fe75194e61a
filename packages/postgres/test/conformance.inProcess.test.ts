import { type Broker, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import { type ConnectedPostgresBroker, PostgresBroker, PostgresQueue } from "../src/index.js";
import { queueCapabilities } from "./capabilities.js";

// The in-process mode runs the broker's own code against the stand-in of the table; these are the
// suites the real server passes, so both answer alike. It never connects to the url given.

/** Connections of one in-process server, as the suites' "new client of the same server". */
function inProcess(server: PostgresBroker): () => Broker<ConnectedPostgresBroker> {
  const broker: Broker<ConnectedPostgresBroker> = {
    [brokerMark]: "postgres",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
  return () => broker;
}

const url = "postgres://nobody@127.0.0.1:1/none";
const timing = { arrivalMs: 3000, silenceMs: 200 };

for (const transactional of [false, true]) {
  describe(transactional ? "transactional handlers" : "leased claims", () => {
    const makeBroker = inProcess(new PostgresBroker({ url }));
    const makeSource = (name: string) => new PostgresQueue(name, { pollMs: 200, transactional });
    const factories = { makeBroker, makeSource, capabilities: queueCapabilities, timing };
    conformance.routing(factories);
    conformance.lifecycle(factories);
    conformance.settlement(factories);
    conformance.brokerMovedRetry(factories);
    conformance.messageShape(factories);
    conformance.batches(factories);
    conformance.seeking(factories);
    conformance.transactions(factories);
    conformance.requestReply(factories);
    conformance.inProcessTransport({
      ...factories,
      makeBroker: () => new PostgresBroker({ url }),
    });
  });
}
