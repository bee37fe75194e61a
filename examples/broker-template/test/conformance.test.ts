import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import { Channel, ChannelBroker } from "../src/index.js";

// Every suite, against the broker as a service connects to it (a hub at an address) and in-process.
// A fire-and-forget wire: no settle verb does anything and nothing waits for a new client, which
// the declaration says, so those scenarios show in the tally as skipped with the reason.
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

const factories = {
  // Each call is a new client of the same server: the hub at this address.
  makeBroker: () => new ChannelBroker({ address: "conformance" }),
  makeSource: (name: string) => new Channel(name),
  capabilities,
  timing: { arrivalMs: 2000, silenceMs: 50 },
};

conformance.routing(factories);
conformance.lifecycle(factories);
conformance.settlement(factories);
conformance.redeliveryAddress(factories);
conformance.messageShape(factories);
conformance.batches(factories);
conformance.seeking(factories);
conformance.transactions(factories);
conformance.requestReply(factories);
conformance.inProcessTransport(factories);
conformance.credentials({
  makeBroker: (secret) => new ChannelBroker({ address: "conformance", token: secret }),
  makeSource: (name) => new Channel(name),
});
