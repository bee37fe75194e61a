import type { NatsHost } from "../host.js";
import type { OrderedJetStreamSubject } from "../orderedSubject.js";
import { type DeliveryOf, JetStreamSubscription } from "./jetStreamSubscription.js";
import { OrderedDelivery } from "./orderedDelivery.js";

const orderedDelivery: DeliveryOf = (owner, message, now) =>
  new OrderedDelivery(owner, message, now);

/**
 * Opens an ordered consumer's subscription: the stream checked (declared when asked), then the
 * client's ordered consumer on it. Its seek creates the consumer again from the position.
 */
export async function openOrdered(
  host: NatsHost,
  source: OrderedJetStreamSubject,
): Promise<JetStreamSubscription> {
  await host.link.ensureStream(source.stream, source.subjects, source.declare);
  return JetStreamSubscription.on(host, source, orderedDelivery, true);
}
