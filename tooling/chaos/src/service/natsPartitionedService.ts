// The service's side of the NATS cluster scenario: every partition's durable pull consumer (see
// natsPartitions.ts), on the three nodes' addresses, one handler at a time per partition.
import type { HandlerContext, Outcome, RustStream } from "@ruststream/core";
import { JetStreamSubject, NatsBroker } from "@ruststream/nats";
import { NATS_ACK_WAIT_MS, NATS_FETCH_SIZE } from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";
import {
  NATS_PARTITION_MAX_ACK_PENDING,
  partitionDurable,
  partitionSubject,
  partitions,
} from "./natsPartitions.js";

type Handle = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

export function mountNatsPartitions(app: RustStream, config: ServiceConfig, handle: Handle): void {
  app.broker(
    // Every node's address: the client moves to another when the one it is on dies. The API's
    // time and its retries are the package's defaults: each replica makes the eight replicated
    // consumers at its start (the first two at once, a restarted one while a leader may be being
    // elected), which the package retries while a group has no leader or the API times out.
    new NatsBroker({ servers: config.address.split(","), reconnectWaitMs: 250 }),
    (b) => {
      for (const p of partitions()) {
        b.subscriber(
          new JetStreamSubject(partitionSubject(config.key, p), {
            stream: config.key,
            durable: partitionDurable(config.group, p),
            ackWaitMs: NATS_ACK_WAIT_MS,
            maxAckPending: NATS_PARTITION_MAX_ACK_PENDING,
            fetchSize: NATS_FETCH_SIZE,
          }),
        ).handle(handle);
      }
    },
  );
}
