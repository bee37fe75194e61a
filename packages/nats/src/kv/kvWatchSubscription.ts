import type { NatsHost } from "../host.js";
import { type DeliveryOf, JetStreamSubscription } from "../jetstream/jetStreamSubscription.js";
import type { KvWatch } from "../sources.js";
import { KvDelivery, operationOf } from "./kvDelivery.js";

/**
 * Opens a KV watch: the bucket checked (declared when asked), then an ephemeral consumer of its own
 * on the bucket's stream, filtered to the watch's keys, starting where the watch says. A delete or
 * a purge is acknowledged unseen unless the watch asks for them.
 */
export async function openKvWatch(host: NatsHost, watch: KvWatch): Promise<JetStreamSubscription> {
  await host.link.ensureBucket(watch.bucket, watch.declare);
  const deliveryOf: DeliveryOf = (owner, message, now) => {
    const operation = operationOf(message);
    if (operation !== "put" && !watch.deletes) return undefined;
    return new KvDelivery(owner, message, now, watch.bucket, operation);
  };
  return JetStreamSubscription.on(host, watch, deliveryOf, false);
}
