// A streamed reply over Kafka, where a request's replies could take different paths: the client's
// requests ask their replies on a reply topic of three partitions that requesters share. Every
// reply of one request carries the correlation id as its key, so they land on one partition (read
// back from the topic: without the key, the producer spreads keyless records round robin over the
// three, and the requester, reading the three at once, may get the values out of order); the
// caller gets every value, in order. kafkajs, which every runtime loads.
import "reflect-metadata";
import { Controller, type INestMicroservice, Module } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { MessagePattern, Payload } from "@nestjs/microservices";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { requireEnv, uniqueName, within } from "@ruststream/tooling-testkit";
import { lastValueFrom, range, toArray } from "rxjs";
import { afterEach, expect, it } from "vitest";
import { ClientRustStream, RustStreamServer } from "../src/index.js";

const VALUES = 30;

const broker = (replyTopic?: string) =>
  new KafkaBroker({
    brokers: requireEnv("KAFKA_BROKERS"),
    engine: "kafkajs",
    ...(replyTopic === undefined ? {} : { replyTopic }),
  });

/** Creates the shared reply topic with three partitions, through a subscription that creates it. */
async function sharedReplyTopic(): Promise<string> {
  const name = uniqueName("nest-replies");
  const connected = await broker().connect();
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(name, { group: `${name}-maker`, create: { partitions: 3 } }),
    );
    await subscription.close();
  } finally {
    await connected.shutdown();
  }
  return name;
}

/**
 * The partitions the first `count` records of `topic` sit on, read from its start by a group of
 * their own: exactly `count`, the replies one request got.
 */
async function partitionsOf(topic: string, count: number): Promise<number[]> {
  const connected = await broker().connect();
  try {
    const subscription = await connected.subscribe(
      new KafkaTopic(topic, { group: `${topic}-reader`, start: "earliest" }),
    );
    const partitions: number[] = [];
    try {
      while (partitions.length < count) {
        const next = await subscription.next();
        if (next.done === true)
          throw new Error(`${topic} closed after ${partitions.length} records`);
        partitions.push(next.value.record.partition);
        next.value.ack();
      }
    } finally {
      await subscription.close();
    }
    return partitions;
  } finally {
    await connected.shutdown();
  }
}

function countingModule(pattern: string): new () => object {
  @Controller()
  class CountingController {
    @MessagePattern(pattern)
    count(@Payload() n: number) {
      return range(1, n);
    }
  }

  @Module({ controllers: [CountingController] })
  class CountingModule {}
  return CountingModule;
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

it("a streamed reply over a shared reply topic of three partitions comes back whole and in order, every reply on one partition", async () => {
  const replyTopic = await sharedReplyTopic();
  const pattern = uniqueName("nest-count");
  const app: INestMicroservice = await NestFactory.createMicroservice(countingModule(pattern), {
    strategy: new RustStreamServer({ broker: broker(), name: "counting" }),
    logger: false,
  });
  await app.listen();
  closing.push(() => app.close());
  const client = new ClientRustStream({ broker: broker(replyTopic), timeoutMs: 30_000 });
  closing.push(() => client.close());
  const values = await within(
    60_000,
    "the streamed reply",
    lastValueFrom(client.send<number>(pattern, VALUES).pipe(toArray())),
  );
  expect(values).toEqual(Array.from({ length: VALUES }, (_, i) => i + 1));
  // Each value a reply, then the one that ends the stream: all keyed by the one correlation id.
  const partitions = await within(
    60_000,
    "the reply topic read back",
    partitionsOf(replyTopic, VALUES + 1),
  );
  expect(new Set(partitions).size).toBe(1);
});
