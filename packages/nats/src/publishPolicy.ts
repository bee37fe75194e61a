import type { PublishPolicy } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { JetStreamPublisher } from "./jetStreamPublisher.js";
import { NatsPublisher, type NatsPublishSettings, type PublisherHost } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "nats", label: "NATS", broker: "NatsBroker" };

/**
 * The NATS publish policy: configuration only, paired with a connection at startup.
 * `new NatsPublish()` publishes on core NATS (the broker's default) and sends requests;
 * `new NatsPublish({ jetStream: true })` publishes to JetStream and resolves on the stream's
 * acknowledgement.
 */
export class NatsPublish implements PublishPolicy<object, NatsPublisher | JetStreamPublisher> {
  readonly [policyMark] = "nats";
  readonly settings: NatsPublishSettings;

  constructor(settings: NatsPublishSettings = {}) {
    this.settings = { ...settings };
  }

  async pair(connected: object): Promise<NatsPublisher | JetStreamPublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "sent");
    host.assertOpen();
    return this.settings.jetStream === true
      ? new JetStreamPublisher(host)
      : new NatsPublisher(host);
  }
}
