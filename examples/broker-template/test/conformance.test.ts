import { type Capabilities, conformance, notBuilt } from "@ruststream/testing/conformance";
import { Channel, ChannelBroker } from "../src/index.js";

// Every suite, against the broker as a service connects to it (a hub at an address) and in-process.
// A fire-and-forget wire: no settle verb does anything and nothing waits for a new client, which
// the declaration says (`false`: the broker cannot), so those scenarios show in the tally as
// skipped with the reason. What the hub could carry but the template leaves out to stay small is
// declared `notBuilt`: a broker made from it builds or declares each.
const capabilities: Capabilities = {
  backlog: "missed",
  ack: false,
  drop: false,
  requeue: false,
  delayedRequeue: false,
  durable: false,
  partitionKey: true,
  // Core's PullSubscription hands over what the subscription buffered, in batches.
  batches: true,
  // Nothing is kept to seek in.
  seek: false,
  // The hub takes one frame at a time: nothing makes several visible at once.
  transactions: false,
  // A reply channel per connection would carry replies, as Redis Pub/Sub's do: the hub allows it.
  request: notBuilt("the template leaves it out to stay small"),
  // Nothing settles, so nothing settles after a close either.
  settleAfterClose: false,
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
// Every subscriber of a channel gets each frame.
conformance.redeliveryAddress({ ...factories, fanOut: true });
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
