import type { NatsHost } from "../host.js";
import { type DeliveryOf, JetStreamSubscription } from "../jetstream/jetStreamSubscription.js";
import type { ObjectWatch } from "../sources.js";
import { infoOf, ObjectDelivery } from "./objectDelivery.js";

/**
 * Opens an object store watch: the store checked (declared when asked), then an ephemeral consumer
 * of its own on the objects' info subjects. A deleted object's entry is acknowledged unseen unless
 * the watch asks for them; an entry that is not an object's info is delivered with its
 * `decodeError`, for the decode policy.
 */
export async function openObjectWatch(
  host: NatsHost,
  watch: ObjectWatch,
): Promise<JetStreamSubscription> {
  await host.link.ensureObjectStore(watch.bucket, watch.declare);
  const read = (info: Parameters<typeof host.link.readObject>[0]) =>
    host.link.readObject(info, watch.maxBytes);
  const deliveryOf: DeliveryOf = (owner, message, now) => {
    const info = infoOf(message);
    if (!(info instanceof Error) && info.deleted === true && !watch.deletes) return undefined;
    return new ObjectDelivery(owner, message, now, info, read);
  };
  return JetStreamSubscription.on(host, watch, deliveryOf, false);
}
