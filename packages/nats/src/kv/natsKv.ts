import type { Codec } from "@ruststream/core";
import { type PolicyOwner, pairedHost } from "@ruststream/core/broker";
import { checkBucket, kvStream } from "../names.js";
import type { PublisherHost } from "../publisher.js";
import { checkKvDeclaration, type KvBucketDeclaration } from "../sources.js";
import { KvBucket } from "./kvBucket.js";
import { KvCodecs } from "./kvCodecs.js";

const owner: PolicyOwner = { kind: "nats", label: "NATS", broker: "NatsBroker" };

/** A bucket's: its declaration, and the codecs its reads know by content type. */
export interface NatsKvOptions {
  readonly declare?: KvBucketDeclaration;
  /**
   * The codecs `get` and `history` decode a value with by the `content-type` its put wrote (say
   * core's `msgpack`), beside core's `json` and `bytes`, which a given codec of their content
   * type replaces. A content type none of them has is refused at the read, naming these.
   */
  readonly codecs?: readonly Codec<unknown>[];
}

/**
 * A KV bucket's reads, deletes and purges: configuration only, paired with a connection, which
 * checks the bucket (declaring it when `declare` is given) and gives a `KvBucket`.
 */
export class NatsKv {
  readonly bucket: string;
  readonly declare: KvBucketDeclaration | undefined;
  readonly #codecs: KvCodecs;

  constructor(bucket: string, options: NatsKvOptions = {}) {
    this.bucket = checkBucket(bucket, "NatsKv");
    this.declare = checkKvDeclaration(options.declare, "NatsKv");
    this.#codecs = new KvCodecs(options.codecs, "NatsKv");
  }

  async pair(connected: object): Promise<KvBucket> {
    const host = pairedHost<PublisherHost>(connected, owner, "sent");
    host.assertOpen();
    await host.link.ensureBucket(this.bucket, this.declare);
    // Read once, as the KV clients read it when they open a bucket.
    const direct = await host.link.allowsDirect(kvStream(this.bucket));
    host.assertOpen();
    return new KvBucket(host, this.bucket, direct, this.#codecs);
  }
}
