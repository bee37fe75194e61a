import type { PublishPolicy } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { ChannelPublisher, type PublisherHost } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "channels", label: "channel", broker: "ChannelBroker" };

/**
 * The publish policy: configuration only, paired with a connection at startup. It takes any
 * connection and checks the brand, rather than naming the connection's class, which would tie this
 * file to connection.ts and back.
 */
export class ChannelPublish implements PublishPolicy<object, ChannelPublisher> {
  readonly [policyMark] = "channels";

  async pair(connected: object): Promise<ChannelPublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "send");
    host.assertOpen();
    return new ChannelPublisher(host);
  }
}
