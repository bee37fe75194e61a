import { uniqueName } from "@ruststream/tooling-testkit";
import type { ConsumerOptions, ProducerOptions, PulsarClient } from "../src/wire/index.js";

/**
 * A fresh topic with a consumer on subscription "s" reading it from its earliest message, and a
 * producer writing to it: the opening of most wire tests, each changing only what it is about.
 */
export async function wireTopic(
  client: PulsarClient,
  prefix: string,
  options: {
    readonly consumer?: Partial<Omit<ConsumerOptions, "topic">>;
    readonly producer?: Partial<Omit<ProducerOptions, "topic">>;
  } = {},
) {
  const topic = uniqueName(prefix);
  const consumer = await client.subscribe({
    topic,
    subscription: "s",
    initialPosition: "earliest",
    ...options.consumer,
  });
  const producer = await client.createProducer({ topic, ...options.producer });
  return { topic, consumer, producer };
}
