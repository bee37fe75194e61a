import { type PolicyOwner, pairedHost } from "@ruststream/core/broker";
import { checkBucket, kvStream } from "../names.js";
import type { PublisherHost } from "../publisher.js";
import { checkKvDeclaration, type KvBucketDeclaration } from "../sources.js";
import { KvBucket } from "./kvBucket.js";

const owner: PolicyOwner = { kind: "nats", label: "NATS", broker: "NatsBroker" };

/**
 * A KV bucket's reads, deletes and purges: configuration only, paired with a connection, which
 * checks the bucket (declaring it when `declare` is given) and gives a `KvBucket`.
 */
export class NatsKv {
  readonly bucket: string;
  readonly declare: KvBucketDeclaration | undefined;

  constructor(bucket: string, options: { readonly declare?: KvBucketDeclaration } = {}) {
    this.bucket = checkBucket(bucket, "NatsKv");
    this.declare = checkKvDeclaration(options.declare, "NatsKv");
  }

  async pair(connected: object): Promise<KvBucket> {
    const host = pairedHost<PublisherHost>(connected, owner, "sent");
    host.assertOpen();
    await host.link.ensureBucket(this.bucket, this.declare);
    // Read once, as the KV clients read it when they open a bucket.
    const direct = await host.link.allowsDirect(kvStream(this.bucket));
    host.assertOpen();
    return new KvBucket(host, this.bucket, direct);
  }
}
