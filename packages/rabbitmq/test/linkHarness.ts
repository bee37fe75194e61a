import { randomUUID } from "node:crypto";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { AmqpLink } from "../src/client/amqpLink.js";
import { InProcessRabbit } from "../src/inProcess/inProcessRabbit.js";
import type { Link, LinkDelivery, PublishRequest } from "../src/link.js";
import type { QueueSpec, Table } from "../src/topology/topology.js";

/** The two sides every link test runs on: the real node and the stand-in. */
export const sides = [
  {
    side: "server",
    open: (): Promise<Link> =>
      AmqpLink.open({
        urls: [requireEnv("RABBITMQ_URL")],
        authMechanism: "PLAIN",
        socket: { timeout: 5000 },
        waitForConnectionMs: 5000,
        reconnect: { initialMs: 100, maxMs: 2000 },
        where: "the test node",
      }),
  },
  {
    side: "stand-in",
    open: (() => {
      const server = new InProcessRabbit();
      return async (): Promise<Link> => server.link();
    })(),
  },
] as const;

export const unique = (label: string) => `link-${label}-${randomUUID().slice(0, 8)}`;

export function queue(name: string, args: Table = {}, durable = true): QueueSpec {
  return { name, durable, exclusive: false, autoDelete: false, arguments: args };
}

export function message(
  exchange: string,
  routingKey: string,
  body: string,
  headers: Table = {},
  mandatory = true,
): PublishRequest {
  return {
    exchange,
    routingKey,
    content: Buffer.from(body),
    properties: { headers, persistent: true },
    mandatory,
  };
}

/** A consumer's deliveries as they come, and a wait for the n-th one (bounded). */
export async function collect(
  link: Link,
  name: string,
  prefetch = 10,
  onDelivery: (d: LinkDelivery) => void = () => {},
) {
  const seen: LinkDelivery[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const consumer = await link.consume({
    queue: name,
    prefetch,
    arguments: {},
    onDelivery: (d) => {
      seen.push(d);
      onDelivery(d);
      for (const w of waiters.filter((w) => seen.length >= w.n)) w.resolve();
    },
    onCancelled: () => {},
  });
  return {
    seen,
    consumer,
    async count(n: number, timeoutMs = 5000): Promise<LinkDelivery[]> {
      if (seen.length < n) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`${seen.length} of ${n} deliveries after ${timeoutMs} ms`)),
            timeoutMs,
          );
          waiters.push({
            n,
            resolve: () => {
              clearTimeout(timer);
              resolve();
            },
          });
        });
      }
      return seen.slice(0, n);
    },
  };
}

export const text = (d: LinkDelivery) => Buffer.from(d.content).toString();
