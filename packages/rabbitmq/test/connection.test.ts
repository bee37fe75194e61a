import { randomUUID } from "node:crypto";
import { type ConnectionChange, HeaderMap, headerNames, isRustStreamError } from "@ruststream/core";
import { TcpRelay } from "@ruststream/tooling-testkit";
import { requireEnv } from "@ruststream/tooling-testkit/brokers";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ConnectedRabbitBroker,
  RabbitBroker,
  RabbitExchange,
  RabbitPublish,
  RabbitQueue,
  RabbitQuorumQueue,
  RabbitStream,
} from "../src/index.js";

const open: ConnectedRabbitBroker[] = [];
const relays: TcpRelay[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.shutdown()));
  await Promise.allSettled(relays.splice(0).map((r) => r.cut()));
});

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (payload: Uint8Array) => new TextDecoder().decode(payload);
const name = (label: string) => `conn-${label}-${randomUUID().slice(0, 8)}`;

async function connect(
  options: Partial<ConstructorParameters<typeof RabbitBroker>[0]> = {},
  onState?: (change: ConnectionChange) => void,
): Promise<ConnectedRabbitBroker> {
  const broker = new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true, ...options });
  const connected = await broker.connect(onState === undefined ? {} : { onState });
  open.push(connected);
  return connected;
}

async function relayed(): Promise<TcpRelay> {
  const node = new URL(requireEnv("RABBITMQ_URL"));
  const relay = new TcpRelay({ host: node.hostname, port: Number(node.port) });
  await relay.start();
  relays.push(relay);
  return relay;
}

/** Resolves once `states` holds `state`, checked on every change. */
function stateSeen(states: string[], state: string, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const check = () => {
      if (states.includes(state)) resolve();
      else if (Date.now() > deadline) reject(new Error(`no ${state} in [${states.join(", ")}]`));
      else setTimeout(check, 10);
    };
    check();
  });
}

/** Deletes a stream queue through the management API: a stream has no expiry of its own. */
async function deleteStream(stream: string): Promise<void> {
  await fetch(`${requireEnv("RABBITMQ_MANAGEMENT_URL")}/api/queues/%2F/${stream}`, {
    method: "DELETE",
    headers: {
      authorization: `Basic ${Buffer.from(`${requireEnv("RABBITMQ_USERNAME")}:${requireEnv("RABBITMQ_PASSWORD")}`).toString("base64")}`,
    },
  });
}

describe("the connection (real node)", () => {
  it("an unroutable publish fails naming the exchange and the routing key", async () => {
    const connected = await connect();
    const exchange = new RabbitExchange(name("events"), {
      type: "topic",
      autoDelete: true,
      durable: false,
    });
    const publisher = await new RabbitPublish({ exchange }).pair(connected);
    const refused = await publisher
      .publish({ name: "orders.created", payload: bytes("x") })
      .catch((e) => e);
    expect(isRustStreamError(refused, "publish-refused")).toBe(true);
    expect(refused.message).toContain(`exchange "${exchange.name}"`);
    expect(refused.message).toContain('routing key "orders.created"');
    // The default policy on the default exchange: the name is a queue's, and there is none.
    const missing = name("missing");
    const direct = await connected.defaultPublishPolicy().pair(connected);
    const again = await direct.publish({ name: missing, payload: bytes("x") }).catch((e) => e);
    expect(again.code).toBe("publish-refused");
    expect(again.message).toContain(`routing key "${missing}"`);
  });

  it("a queue that is missing, or declared otherwise, is refused at subscribe naming the difference", async () => {
    const checking = await connect({ declare: false });
    const queue = name("checked");
    const missing = await checking.subscribe(new RabbitQueue(queue)).catch((e) => e);
    expect(isRustStreamError(missing, "invalid-argument")).toBe(true);
    expect(missing.message).toContain(`queue "${queue}" does not exist`);
    const declaring = await connect();
    await (
      await declaring.subscribe(new RabbitQueue(queue, { arguments: { "x-expires": 60_000 } }))
    ).close();
    const other = await checking
      .subscribe(new RabbitQuorumQueue(queue, { arguments: { "x-expires": 60_000 } }))
      .catch((e) => e);
    expect(isRustStreamError(other, "invalid-argument")).toBe(true);
    expect(other.message).toContain("x-queue-type");
    // The same description checks; the connection still serves after the refusals.
    const same = await checking.subscribe(
      new RabbitQueue(queue, { arguments: { "x-expires": 60_000 } }),
    );
    await same.close();
  });

  it("a lost connection reports reconnecting, then connected; the consumer resumes and a publish meanwhile waits", async () => {
    const relay = await relayed();
    const states: string[] = [];
    const connected = await connect(
      { url: relay.url(requireEnv("RABBITMQ_URL")), reconnect: { initialMs: 50, maxMs: 200 } },
      (change) => states.push(change.state),
    );
    const queue = name("resume");
    const subscription = await connected.subscribe(
      new RabbitQueue(queue, { arguments: { "x-expires": 60_000 } }),
    );
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: queue, payload: bytes("before") });
    const first = (await subscription.next()).value;
    expect(text(first?.payload ?? new Uint8Array())).toBe("before");

    await relay.cut();
    await stateSeen(states, "reconnecting");
    expect(connected.state).toBe("reconnecting");
    // Handed out on the channel that is gone: not acked on the new one, and it comes back.
    const stale = await Promise.resolve(first?.ack()).catch((e) => e);
    expect(isRustStreamError(stale, "broker-failure")).toBe(true);
    const waiting = publisher.publish({ name: queue, payload: bytes("during") });
    await relay.restore();
    await waiting;
    await stateSeen(states, "connected");
    expect(connected.state).toBe("connected");
    const again = [(await subscription.next()).value, (await subscription.next()).value];
    expect(again.map((d) => text(d?.payload ?? new Uint8Array())).sort()).toEqual([
      "before",
      "during",
    ]);
    for (const d of again) await d?.ack();
  });

  it("given several nodes, it takes the first that answers, and after a loss moves on to the next", async () => {
    const [first, second] = [await relayed(), await relayed()];
    const node = requireEnv("RABBITMQ_URL");
    await first.cut();
    const states: string[] = [];
    // The first node refuses: the connection is made through the second.
    const connected = await connect(
      { url: [first.url(node), second.url(node)], reconnect: { initialMs: 50, maxMs: 200 } },
      (change) => states.push(change.state),
    );
    const queue = name("nodes");
    const subscription = await connected.subscribe(
      new RabbitQueue(queue, { arguments: { "x-expires": 60_000 } }),
    );
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await first.restore();
    // The second goes away for good: the reconnect goes round to the first.
    await second.cut();
    await stateSeen(states, "reconnecting");
    await publisher.publish({ name: queue, payload: bytes("after") });
    await stateSeen(states, "connected");
    const delivery = (await subscription.next()).value;
    expect(text(delivery?.payload ?? new Uint8Array())).toBe("after");
    await delivery?.ack();
  });

  it("refuses an empty list of nodes, naming the fix", () => {
    const refused = (() => {
      try {
        new RabbitBroker({ url: [] });
      } catch (error) {
        return error;
      }
    })();
    expect(isRustStreamError(refused, "invalid-argument")).toBe(true);
    expect(String(refused)).toContain("a list of a cluster's nodes");
  });

  it("a publish while the connection is down fails after waitForConnectionMs, naming why", async () => {
    const relay = await relayed();
    const connected = await connect({
      url: relay.url(requireEnv("RABBITMQ_URL")),
      waitForConnectionMs: 300,
      reconnect: { initialMs: 50, maxMs: 100 },
    });
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await relay.cut();
    const started = Date.now();
    const failed = await publisher
      .publish({ name: name("down"), payload: bytes("x") })
      .catch((e) => e);
    expect(isRustStreamError(failed, "broker-failure")).toBe(true);
    expect(failed.message).toMatch(/is down .* did not come back within 300 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a stream queue is read from an offset, each delivery's position its offset", async () => {
    const connected = await connect();
    const stream = name("stream");
    // Declared by a first subscription; what is published after stays in the stream.
    await (await connected.subscribe(new RabbitStream(stream))).close();
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (let i = 0; i < 5; i++) await publisher.publish({ name: stream, payload: bytes(`s${i}`) });
    const read = async (offset: "first" | number, count: number) => {
      const subscription = await connected.subscribe(new RabbitStream(stream, { offset }));
      const got = [];
      for (let i = 0; i < count; i++) {
        const d = (await subscription.next()).value;
        got.push(`${text(d?.payload ?? new Uint8Array())}@${d?.position.offset}`);
        await d?.ack();
      }
      await subscription.close();
      return got;
    };
    expect(await read("first", 5)).toEqual(["s0@0", "s1@1", "s2@2", "s3@3", "s4@4"]);
    expect(await read(3, 2)).toEqual(["s3@3", "s4@4"]);
    await deleteStream(stream);
  });

  // A stream keeps no offset for an AMQP consumer: after a lost connection the consumer reads again
  // from the lowest offset it handed over and that was not settled, not from its descriptor's.
  const cutWhileReading = async (offset: "first" | "next") => {
    const relay = await relayed();
    const states: string[] = [];
    const reading = await connect(
      { url: relay.url(requireEnv("RABBITMQ_URL")), reconnect: { initialMs: 50, maxMs: 200 } },
      (change) => states.push(change.state),
    );
    // The publisher's connection is not cut: it writes while the reader is away.
    const writing = await connect();
    const stream = name(`resume-${offset}`);
    const subscription = await reading.subscribe(new RabbitStream(stream, { offset }));
    const publisher = await writing.defaultPublishPolicy().pair(writing);
    const publish = async (from: number, to: number) => {
      for (let i = from; i < to; i++)
        await publisher.publish({ name: stream, payload: bytes(`m${i}`) });
    };
    await publish(0, 10);
    // Offsets 0-6 handled and acked, 7 handed over and in work when the connection goes.
    for (let i = 0; i < 7; i++) {
      const d = (await subscription.next()).value!;
      expect(d.position.offset).toBe(BigInt(i));
      await d.ack();
    }
    const inWork = (await subscription.next()).value!;
    expect(inWork.position.offset).toBe(7n);
    await relay.cut();
    await stateSeen(states, "reconnecting");
    const stale = await Promise.resolve(inWork.ack()).catch((e) => e);
    await publish(10, 20);
    await relay.restore();
    await stateSeen(states, "connected");
    // The sentinel, written once the consumer is back: everything before it has been delivered.
    await publisher.publish({ name: stream, payload: bytes("end") });
    const after: string[] = [];
    for (;;) {
      const d = (await subscription.next()).value!;
      const payload = text(d.payload);
      if (payload === "end") break;
      after.push(`${payload}@${d.position.offset}`);
      await Promise.resolve(d.ack()).catch(() => {});
    }
    await subscription.close();
    await deleteStream(stream);
    return { after, stale };
  };

  for (const offset of ["first", "next"] as const) {
    it(`a stream read from "${offset}" resumes after a lost connection at the first offset not settled: none lost, none settled read again`, async () => {
      const { after, stale } = await cutWhileReading(offset);
      // 8 and 9 may have arrived on the channel that was cut (handed over, not pulled): they are
      // read again too. Nothing settled before the cut comes again; everything after 7 comes.
      expect(after.filter((d) => Number(d.split("@")[1]) < 7)).toEqual([]);
      expect(new Set(after)).toEqual(
        new Set(Array.from({ length: 13 }, (_, i) => `m${i + 7}@${i + 7}`)),
      );
      // Settling what was in work fails, saying where the stream is read again from.
      expect(isRustStreamError(stale, "broker-failure")).toBe(true);
      expect(stale.message).toContain(
        "reads the stream again from offset 7, this delivery included",
      );
    }, 30_000);
  }

  it("1,000 concurrent requests over one channel each get their own reply", async () => {
    const requester = await connect();
    const responder = await connect();
    const queue = name("rpc");
    const subscription = await responder.subscribe(
      new RabbitQueue(queue, { arguments: { "x-expires": 60_000 } }),
    );
    const replies = await responder.defaultPublishPolicy().pair(responder);
    void (async () => {
      for await (const d of subscription) {
        const headers = new HeaderMap().set(
          headerNames.correlationId,
          d.headers.getString(headerNames.correlationId) ?? "",
        );
        await replies.publish({
          name: d.headers.getString(headerNames.replyTo) ?? "",
          payload: d.payload,
          headers,
        });
        await d.ack();
      }
    })().catch(() => {});
    const publisher = await requester.defaultPublishPolicy().pair(requester);
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        publisher.request({ name: queue, payload: bytes(`n${i}`) }, { timeoutMs: 30_000 }),
      ),
    );
    expect(answers.map((a) => text(a.payload))).toEqual(
      Array.from({ length: 1000 }, (_, i) => `n${i}`),
    );
    await subscription.close();
  }, 60_000);
});
