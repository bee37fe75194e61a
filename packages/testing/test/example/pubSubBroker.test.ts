import { conformance } from "../../src/index.js";
import { Channel, PubSubBroker } from "./pubSubBroker.js";

// The suites that fit a broker without acknowledgement or durable groups. The memory broker's test
// (../memory.conformance.test.ts) shows the rest: settlement, batches, seeking, transactions, ...
const server = new PubSubBroker();
const factories = {
  makeBroker: () => server,
  makeSource: (name: string) => new Channel(name),
  timing: { arrivalMs: 1000, silenceMs: 50 },
};

conformance.routing({ ...factories, backlog: "missed" });
conformance.lifecycle(factories);
conformance.messageShape(factories);
conformance.redeliveryAddress(factories);
conformance.credentials({
  makeBroker: () => new PubSubBroker(),
  makeSource: (name) => new Channel(name),
});
