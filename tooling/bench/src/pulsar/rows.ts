// The Node rows: our wire client's producer and consume loop, and the full app. Each opens its own
// client (untimed), times itself as the Java worker does (from the first send to the last receipt;
// from the first order in hand to the last ack), and reports what the bench checks it by.
import { json, RustStream } from "@ruststream/core";
import { PulsarBroker, PulsarShared } from "@ruststream/pulsar";
import { type Message, PulsarClient } from "@ruststream/pulsar/wire";
import { idBase, type Order, orderNumber, orderPayload } from "./order.js";

/** What a row measured. */
export interface Measured {
  readonly messages: number;
  readonly ms: number;
  /** This process's CPU time over the same span (user + system, every thread). */
  readonly cpuMs: number;
  /** Consume rows: the sum of the order numbers read, checked against 0 + 1 + ... + (count - 1). */
  readonly idSum?: bigint;
}

function cpuMsNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The Java worker's batching, on our producer: 1000 messages, 128 KiB, 1 ms, no compression. */
const batching = { maxMessages: 1000, maxBytes: 128 * 1024, maxDelayMs: 1 } as const;

/**
 * Our producer: `count` orders with at most `window` unconfirmed (the Java worker's
 * `maxPendingMessages` with `blockIfQueueFull`), then `flush()`; counts the receipts.
 */
export async function wireProduce(
  serviceUrl: string,
  topic: string,
  count: number,
  window: number,
): Promise<Measured> {
  const client = new PulsarClient({ serviceUrl });
  try {
    const producer = await client.createProducer({ topic, batching });
    let confirmed = 0;
    let inFlight = 0;
    let failure: unknown;
    let roomFor: (() => void) | undefined;
    const settled = (): void => {
      inFlight--;
      if (roomFor !== undefined) {
        const wake = roomFor;
        roomFor = undefined;
        wake();
      }
    };
    const onReceipt = (): void => {
      confirmed++;
      settled();
    };
    const onFailure = (error: unknown): void => {
      failure = error;
      settled();
    };
    const cpuBefore = cpuMsNow();
    const began = performance.now();
    for (let n = 0; n < count; n++) {
      if (inFlight >= window) {
        await new Promise<void>((resolve) => {
          roomFor = resolve;
        });
      }
      inFlight++;
      producer.send({ payload: orderPayload(n) }).then(onReceipt, onFailure);
    }
    await producer.flush();
    const ms = performance.now() - began;
    const cpuMs = cpuMsNow() - cpuBefore;
    if (failure !== undefined) throw failure;
    await producer.close();
    return { messages: confirmed, ms, cpuMs };
  } finally {
    await client.close();
  }
}

/**
 * Our bare consume loop on a Shared subscription: take what the receiver queue holds
 * (`tryReceive`), wait only when it is empty, read each order (its number from the digits, or the
 * whole order with core's JSON codec, the app's), ack it. Timed from the first order in hand to
 * the last ack; closing (untimed) sends the acks still grouped.
 */
export async function wireConsume(
  serviceUrl: string,
  topic: string,
  subscription: string,
  count: number,
  decodeJson: boolean,
): Promise<Measured> {
  const client = new PulsarClient({ serviceUrl });
  try {
    const consumer = await client.subscribe({
      topic,
      subscription,
      subscriptionType: "Shared",
      initialPosition: "earliest",
      receiverQueueSize: 1000,
    });
    let seen = 0;
    let sum = 0;
    let began = 0;
    let cpuBefore = 0;
    while (seen < count) {
      let message: Message | undefined = consumer.tryReceive();
      if (message === undefined) message = await consumer.receive({ timeoutMs: 10_000 });
      if (seen === 0) {
        began = performance.now();
        cpuBefore = cpuMsNow();
      }
      sum += decodeJson
        ? (json.decode(message.payload) as Order).id - idBase
        : orderNumber(message.payload);
      seen++;
      consumer.ack(message);
    }
    const ms = performance.now() - began;
    const cpuMs = cpuMsNow() - cpuBefore;
    await consumer.close();
    return { messages: seen, ms, cpuMs, idSum: BigInt(sum) };
  } finally {
    await client.close();
  }
}

/**
 * The full app: a RustStream app on PulsarBroker reading a Shared subscription (from its earliest
 * message; the retry topic it reads beside it, as every Shared descriptor does, stays empty), a
 * handler typed `Order` decoded by the default JSON codec that only notes the order; the runtime
 * acks. Timed from the first handler call to the last ack sent (`whenIdle`).
 */
export async function appConsume(
  serviceUrl: string,
  topic: string,
  subscription: string,
  count: number,
): Promise<Measured> {
  let seen = 0;
  let sum = 0;
  let began = 0;
  let cpuBefore = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const app = new RustStream({ name: subscription, version: "0" }).broker(
    new PulsarBroker({ url: serviceUrl }),
    (b) => {
      b.subscriber<Order>(
        new PulsarShared(topic, { subscription, initialPosition: "earliest" }),
      ).handle((order) => {
        if (seen === 0) {
          began = performance.now();
          cpuBefore = cpuMsNow();
        }
        sum += order.id - idBase;
        if (++seen === count) finish();
      });
    },
  );
  const running = await app.start();
  const timeout = setTimeout(() => finish(), 10_000 + count / 10);
  try {
    await done;
    await running.whenIdle();
  } finally {
    clearTimeout(timeout);
  }
  const ms = performance.now() - began;
  const cpuMs = cpuMsNow() - cpuBefore;
  await running.stop();
  return { messages: seen, ms, cpuMs, idSum: BigInt(sum) };
}
