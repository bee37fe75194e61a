// The service's Pulsar side: one Shared or Key_Shared subscription every replica joins, through the
// fault proxy's address (the standalone broker answers a lookup that reached it with
// proxy_through_service_url, and the wire client then keeps every socket on that address).
import type { RustStream, SubscriberBuilder } from "@ruststream/core";
import { PulsarBroker, PulsarKeyShared, PulsarShared } from "@ruststream/pulsar";
import type { ServiceConfig } from "./config.js";
import { PULSAR_PREFETCH, PULSAR_RECEIVER_QUEUE } from "./pulsarQueue.js";

type PulsarSource = PulsarShared | PulsarKeyShared;

export function mountPulsar(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: PulsarSource) => SubscriberBuilder<unknown>,
    source: (key: string) => PulsarSource,
  ) => void,
): void {
  const options = {
    subscription: config.group,
    // The runner publishes only after every replica is ready, so nothing precedes the cursor; a
    // replica restarted later joins the existing subscription, whose cursor it keeps.
    initialPosition: "earliest",
    receiverQueueSize: PULSAR_RECEIVER_QUEUE,
  } as const;
  const source = (topic: string): PulsarSource =>
    config.broker === "pulsar-key-shared"
      ? new PulsarKeyShared(topic, options)
      : new PulsarShared(topic, options);
  app.broker(new PulsarBroker({ url: config.address, subscription: config.group }), (b) =>
    declare((s: PulsarSource) => b.subscriber(s).prefetch(PULSAR_PREFETCH), source),
  );
}
