import {
  MemoryBroker,
  MemoryPosition,
  MemoryPublish,
  MemoryQueue,
  MemoryTopic,
} from "@ruststream/core";
import { conformance } from "../src/conformanceEntry.js";
import { memoryQueueCapabilities, memoryTopicCapabilities } from "./memoryCapabilities.js";

// The memory broker's object is its server, so every factory hands out one object per suite.
function topics() {
  const server = new MemoryBroker();
  return {
    makeBroker: () => server,
    makeSource: (name: string) => new MemoryTopic(name, { group: "conformance" }),
    capabilities: memoryTopicCapabilities,
    timing: { arrivalMs: 2000, silenceMs: 50 },
  };
}

conformance.routing(topics());
conformance.lifecycle({ ...topics(), nackAfterMs: 100 });
conformance.settlement(topics());
conformance.redeliveryAddress(topics());
// Without a group each subscription gets every message.
conformance.redeliveryAddress({
  ...topics(),
  makeSource: (name: string) => new MemoryTopic(name),
  fanOut: true,
});
conformance.messageShape(topics());
conformance.batches(topics());
conformance.seeking({ ...topics(), unknownPosition: () => new MemoryPosition(10n ** 15n) });
conformance.transactions({
  ...topics(),
  makePublisher: (connected) => new MemoryPublish().pair(connected),
});
conformance.requestReply({ ...topics(), timeoutMs: 100 });
conformance.inProcessTransport({ ...topics(), makeBroker: () => new MemoryBroker() });
conformance.credentials({
  makeBroker: (secret) => new MemoryBroker({ url: `memory://svc:${secret}@orders.local:1` }),
  makeSource: (name) => new MemoryTopic(name),
});

// A queue: one shared group from the oldest retained message, the broker moving failures.
const server = new MemoryBroker();
conformance.brokerMovedRetry({
  makeBroker: () => server,
  makeSource: (name) => new MemoryQueue(name),
  capabilities: memoryQueueCapabilities,
  timing: { arrivalMs: 2000, silenceMs: 50 },
});
