import { type PolicyOwner, pairedHost } from "../broker/pairedHost.js";
import { policyMark } from "../marks.js";
import type { PublishPolicy } from "../publisher.js";
import type { MemoryPublisher } from "./memoryPublisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "memory", label: "memory", broker: "MemoryBroker" };

/**
 * The memory broker's publish policy. It has no settings: memory publishes are confirmed as soon as
 * the message is in the topic.
 */
export class MemoryPublish implements PublishPolicy<object, MemoryPublisher> {
  readonly [policyMark] = "memory";

  // Any connection, checked by its brand: naming the connection's class here would tie this file
  // to memoryConnection.ts and back.
  async pair(connected: object): Promise<MemoryPublisher> {
    return pairedHost<PairsMemoryPublishers>(connected, owner, "pairPublisher").pairPublisher();
  }
}

/** A memory connection, as the policy recognises it. */
interface PairsMemoryPublishers {
  pairPublisher(): MemoryPublisher;
}
