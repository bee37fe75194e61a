import { requireEnv } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import type { Where } from "./connections.js";

// A topic whose cluster refuses a record the client lets through, so a transaction fails for real
// (the broker's produce answer, not the client's own size check): on the cluster a one-partition
// topic whose max.message.bytes is 2 KiB, in-process any topic, whose limit is the stand-in's
// cluster-wide message.max.bytes (1 MiB). A broker built for such a test raises its own client limit
// past both with {@link clientLimit}.

/** The broker's `maxMessageBytes` for these tests: past what either cluster takes. */
export const clientLimit = 2_000_000;

/** Creates `topic` to refuse {@link tooLarge} records (nothing to make in-process). */
export async function refusingTopic(where: Where, topic: string): Promise<void> {
  if (where === "in-process") return;
  const admin = new Kafka({
    clientId: "refusing-topic",
    brokers: [requireEnv("KAFKA_BROKERS")],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: 1, configEntries: [{ name: "max.message.bytes", value: "2048" }] },
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

/** A payload the refusing topic refuses: 4 KiB on the cluster, over the stand-in's 1 MiB. */
export const tooLarge = (where: Where): Uint8Array =>
  new Uint8Array(where === "in-process" ? 1_100_000 : 4096);
