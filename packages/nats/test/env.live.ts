import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { requireEnv } from "@ruststream/tooling-testkit";

/** A plain client of the shared server, for what a test checks from the server's side. */
export async function rawClient(): Promise<NatsConnection> {
  return connect({ servers: requireEnv("NATS_URL"), reconnect: false });
}

/** What the server says of a consumer: its redeliveries and what it still waits to hear of. */
export async function consumerState(stream: string, consumer: string) {
  const nc = await rawClient();
  try {
    const info = await (await jetstreamManager(nc)).consumers.info(stream, consumer);
    return {
      redelivered: info.num_redelivered,
      ackPending: info.num_ack_pending,
      delivered: info.delivered.stream_seq,
      ackFloor: info.ack_floor.stream_seq,
    };
  } finally {
    await nc.close();
  }
}

/** Deletes streams a test made, from the shared server. */
export async function deleteStreams(...streams: string[]): Promise<void> {
  const nc = await rawClient();
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of streams) await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/** Polls `check` until it holds; fails naming `what` after `ms`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  what = "the condition",
) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
