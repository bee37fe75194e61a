import { randomUUID } from "node:crypto";
import { isRustStreamError, systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { TcpRelay } from "@ruststream/tooling-testkit";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ConnectedRabbitBroker,
  RabbitBroker,
  RabbitExchange,
  RabbitPublish,
  RabbitQueue,
} from "../src/index.js";

// What a transaction that does not commit whole tells its caller, through the publisher: the
// conformance suite holds the rest (visibility, abort, independence, shutdown).

const open: ConnectedRabbitBroker[] = [];
const relays: TcpRelay[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.shutdown()));
  await Promise.allSettled(relays.splice(0).map((r) => r.cut()));
});

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (payload: Uint8Array) => new TextDecoder().decode(payload);
const name = (label: string) => `tx-${label}-${randomUUID().slice(0, 8)}`;

/** The payloads of the first `n` deliveries of `queue` on `connected`, each acked; bounded. */
async function firstOf(connected: ConnectedRabbitBroker, queue: string, n: number) {
  const subscription = await connected.subscribe(new RabbitQueue(queue, { durable: false }));
  const got: string[] = [];
  const deadline = Date.now() + 10_000;
  while (got.length < n) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`${got.length} of ${n} deliveries of "${queue}": ${got}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = await Promise.race([
      subscription.next(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), left);
      }),
    ]);
    clearTimeout(timer);
    if (next === undefined) continue;
    if (next.done === true) throw new Error(`the subscription of "${queue}" ended`);
    got.push(text(next.value.payload));
    await next.value.ack();
  }
  await subscription.close();
  return got;
}

const sides: [string, () => Promise<ConnectedRabbitBroker>][] = [
  [
    "real node",
    () => new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true }).connect(),
  ],
  [
    "in process",
    () =>
      new RabbitBroker({ url: "amqp://in-process.invalid:5672", declare: true }).connectInProcess({
        coordinator: new CountingCoordinator(),
        clock: systemClock,
      }),
  ],
];

describe.each(sides)("a transaction's refusals (%s)", (_side, make) => {
  const connect = async () => {
    const connected = await make();
    open.push(connected);
    return connected;
  };

  it("a reply to direct reply-to is refused inside a transaction (RabbitMQ would send it at once), and nothing of the transaction is published", async () => {
    const connected = await connect();
    const queue = name("reply");
    await connected.subscribe(new RabbitQueue(queue, { durable: false })).then((s) => s.close());
    const publisher = await new RabbitPublish({}).pair(connected);
    const refused = await publisher
      .transaction(async (tx) => {
        await tx.publish({ name: queue, payload: bytes("before") });
        await tx.publish({ name: "amq.rabbitmq.reply-to.abc", payload: bytes("reply") });
      })
      .catch((e: unknown) => e);
    expect(isRustStreamError(refused, "unsupported"), String(refused)).toBe(true);
    expect((refused as Error).message).toContain("cannot be part of a transaction");
    await publisher.publish({ name: queue, payload: bytes("sentinel") });
    expect(await firstOf(connected, queue, 1)).toEqual(["sentinel"]);
  });
});

describe("a transaction on the real node", () => {
  const connect = async (url = requireEnv("RABBITMQ_URL")) => {
    const connected = await new RabbitBroker({ url, declare: true }).connect();
    open.push(connected);
    return connected;
  };

  it("its exchange deleted under the publisher: the server closes the channel, the transaction is refused naming it, nothing is published, and the next transaction commits", async () => {
    const connected = await connect();
    const queue = name("gone");
    const exchange = new RabbitExchange(name("gone-exchange"), { type: "fanout" });
    await connected
      .subscribe(
        new RabbitQueue(queue, { durable: false, bindings: [{ exchange, routingKey: "" }] }),
      )
      .then((s) => s.close());
    const toExchange = await new RabbitPublish({ exchange }).pair(connected);
    await toExchange.transaction(async (tx) => tx.publish({ name: "k", payload: bytes("first") }));
    const deleted = await fetch(
      `${requireEnv("RABBITMQ_MANAGEMENT_URL")}/api/exchanges/%2F/${encodeURIComponent(exchange.name)}`,
      { method: "DELETE", headers: { authorization: basicAuth() } },
    );
    expect(deleted.ok, `DELETE exchange: ${deleted.status}`).toBe(true);
    const refused = await toExchange
      .transaction(async (tx) => {
        await tx.publish({ name: "k", payload: bytes("one") });
        await tx.publish({ name: "k", payload: bytes("two") });
      })
      .catch((e: unknown) => e);
    expect(isRustStreamError(refused, "broker-failure"), String(refused)).toBe(true);
    expect((refused as Error).message).toContain(`NOT_FOUND - no exchange '${exchange.name}'`);
    expect((refused as Error).message).toContain("none of it was published");
    // The connection goes on: a transaction to the queue itself commits, behind "first" alone.
    const direct = await new RabbitPublish({}).pair(connected);
    await direct.transaction(async (tx) => tx.publish({ name: queue, payload: bytes("next") }));
    expect(await firstOf(connected, queue, 2)).toEqual(["first", "next"]);
  });

  it("a commit whose answer is lost with the connection is refused as of unknown outcome (here it was committed)", async () => {
    const node = new URL(requireEnv("RABBITMQ_URL"));
    const relay = new TcpRelay({ host: node.hostname, port: Number(node.port) });
    await relay.start();
    relays.push(relay);
    const observer = await connect();
    const cut = await connect(relay.url(requireEnv("RABBITMQ_URL")));
    const queue = name("unanswered");
    await observer.subscribe(new RabbitQueue(queue, { durable: false })).then((s) => s.close());
    const publisher = await new RabbitPublish({}).pair(cut);
    // The transaction channel is opened (tx.select answered) before the server's words are dropped.
    await publisher.transaction(async (tx) => tx.publish({ name: queue, payload: bytes("warm") }));
    relay.mute();
    const outcome = publisher
      .transaction(async (tx) => {
        await tx.publish({ name: queue, payload: bytes("a") });
        await tx.publish({ name: queue, payload: bytes("b") });
      })
      .catch((e: unknown) => e);
    // The server committed it (its messages arrive elsewhere); its commit-ok went nowhere.
    expect(await firstOf(observer, queue, 3)).toEqual(["warm", "a", "b"]);
    await relay.cut();
    const error = await outcome;
    expect(isRustStreamError(error, "broker-failure"), String(error)).toBe(true);
    expect((error as Error).message).toContain("got no answer");
    expect((error as Error).message).toContain("all of it, part of it or none of it");
  });
});

function basicAuth(): string {
  return `Basic ${Buffer.from(`${requireEnv("RABBITMQ_USERNAME")}:${requireEnv("RABBITMQ_PASSWORD")}`).toString("base64")}`;
}
