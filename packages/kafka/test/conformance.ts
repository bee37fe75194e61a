import type { Broker } from "@ruststream/core";
import { conformance } from "@ruststream/testing/conformance";
import { uniqueName } from "@ruststream/tooling-testkit";
import { type ConnectedKafkaBroker, KafkaPosition, KafkaTopic } from "../src/index.js";
import { autoCapabilities, trackedCapabilities } from "./capabilities.js";

// Every suite that fits a KafkaTopic, for one engine and one commit mode. Each subject is a fresh
// topic with a group of its own (named after it), so a second client of the same subject joins the
// group the first one made, and no scenario's members rebalance another's (a classic group spans
// every topic its members read).

const timing = { arrivalMs: 15_000, silenceMs: 500 };

export function suites(
  makeBroker: (transactionalId: string) => Broker<ConnectedKafkaBroker>,
  commit: "auto" | "tracked",
): void {
  // One transactional id for this file's clients (a new client fences the one before, which has
  // shut down by then), unique to the run so files running side by side never fence each other.
  const transactionalId = uniqueName(`tx-${commit}`);
  const makeSource = (name: string) => new KafkaTopic(name, { group: `group-${name}`, commit });
  const capabilities = commit === "tracked" ? trackedCapabilities : autoCapabilities;
  const factories = {
    makeBroker: () => makeBroker(transactionalId),
    makeSource,
    capabilities,
    timing,
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.redeliveryAddress(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking({
    ...factories,
    // Far past anything a test topic holds.
    unknownPosition: (subscription) =>
      KafkaPosition.offset(subscription.name, 0, 1_000_000_000_000_000n),
  });
  conformance.transactions(factories);
  conformance.requestReply(factories);
}
