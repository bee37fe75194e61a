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

const API_TIMEOUT_MS = 20_000;

type Handle = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

export function mountNatsPartitions(app: RustStream, config: ServiceConfig, handle: Handle): void {
  app.broker(
    // Every node's address: the client moves to another when the one it is on dies. A replicated
    // consumer's creation is a Raft group formed on three nodes, and a restarted replica looks its
    // consumers up while a leader may be being elected: the API's default 5 s is too short for both.
    new NatsBroker({
      servers: config.address.split(","),
      reconnectWaitMs: 250,
      apiTimeoutMs: API_TIMEOUT_MS,
    }),
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
