import type { PublishPolicy } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { checkBucket } from "../names.js";
import type { PublisherHost } from "../publisher.js";
import type { ObjectStoreDeclaration } from "../sources.js";
import { ObjectPublisher } from "./objectPublisher.js";

const owner: PolicyOwner = { kind: "nats", label: "NATS", broker: "NatsBroker" };

/**
 * Puts to an object store: configuration only, paired with a connection, which checks the store
 * (declaring it when `declare` is given) and gives an `ObjectPublisher`.
 */
export class NatsObjectPut implements PublishPolicy<object, ObjectPublisher> {
  readonly [policyMark] = "nats";
  readonly bucket: string;
  readonly declare: ObjectStoreDeclaration | undefined;

  constructor(bucket: string, options: { readonly declare?: ObjectStoreDeclaration } = {}) {
    this.bucket = checkBucket(bucket, "NatsObjectPut");
    this.declare = options.declare;
  }

  async pair(connected: object): Promise<ObjectPublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "sent");
    host.assertOpen();
    await host.link.ensureObjectStore(this.bucket, this.declare);
    return new ObjectPublisher(host, this.bucket);
  }
}
