import type { PublishPolicy } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { type PublisherHost, PulsarPublisher, type PulsarPublishSettings } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "pulsar", label: "Pulsar", broker: "PulsarBroker" };

/**
 * The Pulsar publish policy: plain configuration, paired with a connected broker into a
 * {@link PulsarPublisher}. `new PulsarPublish()` is the broker's default.
 */
export class PulsarPublish implements PublishPolicy<object, PulsarPublisher> {
  readonly [policyMark] = "pulsar";
  readonly settings: PulsarPublishSettings;

  constructor(settings: PulsarPublishSettings = {}) {
    this.settings = settings;
  }

  // Any connection, checked by its brand: naming the connection's class here would tie this file
  // to connection.ts and back.
  async pair(connected: object): Promise<PulsarPublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "producer");
    host.assertOpen();
    return new PulsarPublisher(host, this.settings);
  }
}
