import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import amqp, { type ChannelModel } from "amqplib";
import { afterEach, describe, expect, it } from "vitest";
import { management } from "../src/rabbitmq.mjs";
import { requireEnv } from "../src/requireEnv.mjs";

const connections: ChannelModel[] = [];

async function connect(url: string, options: object = {}): Promise<ChannelModel> {
  const connection = await amqp.connect(url, { timeout: 5000, ...options });
  connection.on("error", () => {});
  connections.push(connection);
  return connection;
}

afterEach(async () => {
  await Promise.allSettled(connections.splice(0).map((c) => c.close()));
});

/** What connecting answers when the server refuses it. */
async function refusal(url: string, options: object = {}): Promise<string> {
  try {
    await connect(url, options);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the server accepted a client it should have refused");
}

/** A persistent message through a durable queue of `type`, published with a confirm. */
async function roundTrip(connection: ChannelModel, type: "classic" | "quorum"): Promise<void> {
  const channel = await connection.createConfirmChannel();
  const queue = `smoke-${type}-${randomUUID()}`;
  await channel.assertQueue(queue, { durable: true, arguments: { "x-queue-type": type } });
  try {
    const body = Buffer.from([0, 13, 10, 255, 1]);
    channel.sendToQueue(queue, body, { persistent: true, headers: { "x-n": 1 } });
    await channel.waitForConfirms();
    const message = await waitForMessage(() => channel.get(queue));
    expect(message.content).toEqual(body);
    expect(message.properties.headers?.["x-n"]).toBe(1);
    channel.ack(message);
  } finally {
    await channel.deleteQueue(queue);
  }
}

/** A confirmed message is in the queue at once; `get` is asked again only until it is seen. */
async function waitForMessage<T>(get: () => Promise<T | false>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const message = await get();
    if (message !== false) return message;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("no message after 100 gets");
}

describe("rabbitmq on loopback", () => {
  it("plain AMQP: a classic and a quorum queue each carry a confirmed persistent message", async () => {
    const connection = await connect(requireEnv("RABBITMQ_URL"));
    await roundTrip(connection, "classic");
    await roundTrip(connection, "quorum");
  });

  it("a stream queue is read from an offset", async () => {
    const connection = await connect(requireEnv("RABBITMQ_URL"));
    const channel = await connection.createConfirmChannel();
    const queue = `smoke-stream-${randomUUID()}`;
    await channel.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "stream" } });
    try {
      for (let i = 0; i < 5; i++) channel.sendToQueue(queue, Buffer.from(String(i)));
      await channel.waitForConfirms();
      await channel.prefetch(10);
      const seen: string[] = [];
      await new Promise<void>((resolve) => {
        void channel.consume(
          queue,
          (message) => {
            if (message === null) return;
            seen.push(message.content.toString());
            channel.ack(message);
            if (seen.length === 3) resolve();
          },
          { arguments: { "x-stream-offset": 2 } },
        );
      });
      expect(seen).toEqual(["2", "3", "4"]);
    } finally {
      await channel.deleteQueue(queue);
    }
  });

  it("the consistent-hash exchange plugin is enabled", async () => {
    const connection = await connect(requireEnv("RABBITMQ_URL"));
    const channel = await connection.createChannel();
    const exchange = `smoke-hash-${randomUUID()}`;
    await channel.assertExchange(exchange, "x-consistent-hash", { durable: false });
    await channel.deleteExchange(exchange);
  });

  it("a wrong password is refused", async () => {
    const url = new URL(requireEnv("RABBITMQ_URL"));
    url.password = "wrong";
    expect(await refusal(url.toString())).toMatch(/ACCESS.REFUSED|403/);
  });

  it("TLS: a client trusting the CA works, one without it is refused", async () => {
    const url = requireEnv("RABBITMQ_TLS_URL");
    await roundTrip(
      await connect(url, { ca: [readFileSync(requireEnv("RABBITMQ_TLS_CA"))] }),
      "classic",
    );
    expect(await refusal(url)).toMatch(/self[- ]signed|unable to (get|verify)/i);
  });

  it("the management API answers with the user's credentials and names our node", async () => {
    expect(requireEnv("RABBITMQ_MANAGEMENT_URL")).toMatch(/^http:\/\/127\.0\.0\.1:/);
    const overview = (await management("/api/overview")) as {
      node: string;
      rabbitmq_version: string;
    };
    expect(overview.node).toBe("ruststream@localhost");
    expect(overview.rabbitmq_version).toMatch(/^3\.10\./);
  });
});
