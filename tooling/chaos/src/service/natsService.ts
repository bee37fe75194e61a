// The service's NATS side: a JetStream pull consumer, one durable consumer every replica pulls
// from, on the scenario's stream (its subject and its dead letter's, created by the runner). The
// app publishes to JetStream, so the dead letters the runtime writes are stored.
import type { RustStream, SubscriberBuilder } from "@ruststream/core";
import { JetStreamSubject, NatsBroker } from "@ruststream/nats";
import {
  NATS_ACK_WAIT_MS,
  NATS_FETCH_SIZE,
  NATS_MAX_ACK_PENDING,
  NATS_RETRY_MAX_ACK_PENDING,
} from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";

export function mountNats(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: JetStreamSubject) => SubscriberBuilder<unknown>,
    source: (subject: string) => JetStreamSubject,
  ) => void,
): void {
  const source = (subject: string): JetStreamSubject =>
    new JetStreamSubject(subject, {
      stream: config.key,
      // A durable name holds no dot: the dead letter's consumer is the group's with a suffix.
      durable: subject === config.key ? config.group : `${config.group}-dlq`,
      ackWaitMs: NATS_ACK_WAIT_MS,
      maxAckPending: config.retry === undefined ? NATS_MAX_ACK_PENDING : NATS_RETRY_MAX_ACK_PENDING,
      fetchSize: NATS_FETCH_SIZE,
    });
  app.broker(
    new NatsBroker({ servers: config.address, reconnectWaitMs: 250, publish: { jetStream: true } }),
    (b) => declare((s: JetStreamSubject) => b.subscriber(s), source),
  );
}
