// The service's RabbitMQ side: one quorum queue every replica consumes. With a retry plan the
// runtime declares the cap and the dead letter to the queue (`x-delivery-limit`, a dead-letter
// exchange), so the server moves what fails for good; a delay goes through the package's wait
// queue (a copy, confirmed, then the original acked).
import type { RustStream, SubscriberBuilder } from "@ruststream/core";
import { RabbitBroker, RabbitQuorumQueue } from "@ruststream/rabbitmq";
import { RABBIT_PREFETCH } from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";

export function mountRabbit(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: RabbitQuorumQueue) => SubscriberBuilder<unknown>,
    source: (queue: string) => RabbitQuorumQueue,
  ) => void,
): void {
  const source = (queue: string) => new RabbitQuorumQueue(queue, { prefetch: RABBIT_PREFETCH });
  // A cluster's nodes come as a list, comma-separated (an AMQP URL holds no comma of its own here).
  const url = config.address.split(",");
  app.broker(new RabbitBroker({ url, declare: true }), (b) =>
    declare((s: RabbitQuorumQueue) => b.subscriber(s), source),
  );
}
