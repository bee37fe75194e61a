import { type Broker, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { conformance } from "@ruststream/testing/conformance";
import { describe } from "vitest";
import { type ConnectedKafkaBroker, KafkaBroker, KafkaTopic } from "../src/index.js";
import { autoCapabilities, trackedCapabilities } from "./capabilities.js";
import { suites } from "./conformance.js";

// The in-process mode runs the broker's own code against a stand-in of a cluster; these are the
// suites the real cluster passes, held to the same declarations, so both answer alike.

/** Connections of one in-process cluster, as the suites' "new client of the same server". */
function inProcess(server: KafkaBroker): (transactionalId: string) => Broker<ConnectedKafkaBroker> {
  const broker: Broker<ConnectedKafkaBroker> = {
    [brokerMark]: "kafka",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
  return () => broker;
}

for (const commit of ["tracked", "auto"] as const) {
  describe(commit, () => {
    // The broker's settings are the production ones; only the connection differs.
    suites(
      inProcess(new KafkaBroker({ brokers: "127.0.0.1:9092", transactionalId: "in-process" })),
      commit,
    );
    conformance.inProcessTransport({
      makeBroker: () => new KafkaBroker({ brokers: "127.0.0.1:9092" }),
      makeSource: (name: string) => new KafkaTopic(name, { group: "in-process", commit }),
      capabilities: commit === "tracked" ? trackedCapabilities : autoCapabilities,
    });
  });
}
