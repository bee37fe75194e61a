import { type Capabilities, conformance } from "../../src/index.js";
import { Channel, PubSubBroker } from "./pubSubBroker.js";

// Fire-and-forget: no settle verb does anything, nothing is kept for a new client, and the publisher
// has neither transactions nor requests. Every suite is called; what the declaration leaves out is
// registered as skipped, with the reason, so the tally shows what this broker does not do.
const capabilities: Capabilities = {
  backlog: "missed",
  ack: false,
  drop: false,
  requeue: false,
  delayedRequeue: false,
  durable: false,
  partitionKey: true,
  batches: false,
  seek: false,
  transactions: false,
  request: false,
};

const server = new PubSubBroker();
const factories = {
  makeBroker: () => server,
  makeSource: (name: string) => new Channel(name),
  capabilities,
  timing: { arrivalMs: 1000, silenceMs: 50 },
};

conformance.routing(factories);
conformance.lifecycle(factories);
conformance.settlement(factories);
conformance.messageShape(factories);
conformance.redeliveryAddress(factories);
conformance.batches(factories);
conformance.seeking(factories);
conformance.transactions(factories);
conformance.requestReply(factories);
conformance.credentials({
  makeBroker: () => new PubSubBroker(),
  makeSource: (name) => new Channel(name),
});
