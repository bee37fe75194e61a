import { headerNames, RustStream, retryAfter, systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { TestApp } from "@ruststream/testing";
import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { brokers } from "@ruststream/tooling-testkit/brokers";
import { describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQueue, RabbitStream } from "../src/index.js";

// A graceful stop closes each subscription before it drains the handlers (core's contract for
// `close()`: what was handed out stays valid). Closing cancels the consumer and keeps its channel
// open until what was handed out is settled: a handler that finishes during the drain acks on the
// channel its message came on, and the message is not read again. Each test decides by a sentinel
// published after: a message that came back would be read before it.

const url = () => requireEnv("RABBITMQ_URL");
/** Long enough for the stop to close the subscription (a cancel on loopback) while it runs. */
const handlerMs = 500;

/** A queue that deletes itself a while after its last consumer: nothing left on the shared node. */
const queueOf = (name: string, prefetch = 16) =>
  new RabbitQueue(name, { prefetch, arguments: { "x-expires": 60_000 } });

/** Where a subscription-level test runs: the same test on the node and on the stand-in. */
interface Server {
  readonly name: string;
  /** Connections to one server: each call connects again to the same one. */
  readonly connector: () => () => Promise<ConnectedRabbit>;
}
type ConnectedRabbit = Awaited<ReturnType<RabbitBroker["connect"]>>;

const servers: readonly Server[] = [
  {
    name: "real node",
    connector: () => () => new RabbitBroker({ url: url(), declare: true }).connect(),
  },
  {
    name: "in-process stand-in",
    connector: () => {
      const broker = new RabbitBroker({ url: "amqp://in-process.invalid:5672", declare: true });
      return () =>
        broker.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock });
    },
  },
];

async function connect(
  connecting = () => new RabbitBroker({ url: url(), declare: true }).connect(),
) {
  const connected = await connecting();
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  const publish = (queue: string, body: string) =>
    publisher.publish({ name: queue, payload: new TextEncoder().encode(JSON.stringify(body)) });
  return { connected, publish };
}

/** A stream has no expiry of its own: a test deletes the one it made on the node. */
const deleteQueue = (name: string) =>
  brokers.rabbitmq.management(`/api/queues/%2F/${encodeURIComponent(name)}`, { method: "DELETE" });

/** A body as `publish` wrote it. */
const bodyOf = (delivery: { readonly payload: Uint8Array }): string =>
  JSON.parse(text(delivery.payload)) as string;

/** An app whose one subscriber runs `handle` after `handlerMs`, recording each body it ran. */
function slowApp(queue: string, handle: () => ReturnType<typeof retryAfter> | undefined) {
  const runs: string[] = [];
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const app = new RustStream({ name: `stop-${queue}`, version: "1.0.0" }).broker(
    new RabbitBroker({ url: url(), declare: true }),
    (b) => {
      b.subscriber(queueOf(queue)).handle(async (message) => {
        runs.push(String(message));
        started();
        await new Promise((resolve) => setTimeout(resolve, handlerMs));
        return handle();
      });
    },
  );
  return { app, runs, running };
}

describe("a graceful stop (real node)", () => {
  it("waits for a handler running at the stop, whose ack lands: the message is not read again", async () => {
    const queue = uniqueName("stop-ack");
    const { app, runs, running } = slowApp(queue, () => undefined);
    const t = await TestApp.startLive(app, { withinMs: 30_000 });
    const { connected, publish } = await connect();
    try {
      await publish(queue, "slow");
      await running;
      const report = await t.stop();
      expect(report.failed).toBe(false);
      expect(runs).toEqual(["slow"]);
      // The stop waited for the handler: its outcome is recorded, and it acked.
      expect(t.events.filter((e) => e.type === "outcome")).toMatchObject([{ outcome: "ack" }]);
      const again = await connected.subscribe(queueOf(queue));
      await publish(queue, "sentinel");
      const first = (await again.next()).value;
      expect(bodyOf(first!)).toBe("sentinel");
      await first!.ack();
      await again.close();
    } finally {
      await t.stop();
      await connected.shutdown();
    }
  }, 60_000);

  it("a delayed retry settled during the stop leaves exactly one copy: the wait queue's", async () => {
    const queue = uniqueName("stop-retry");
    const { app, running } = slowApp(queue, () => retryAfter(300));
    const t = await TestApp.startLive(app, { withinMs: 30_000 });
    const { connected, publish } = await connect();
    try {
      await publish(queue, "later");
      await running;
      await t.stop();
      const again = await connected.subscribe(queueOf(queue));
      // The original, had it come back, would be in the queue now, ahead of the copy on its delay.
      const first = (await again.next()).value;
      expect(bodyOf(first!)).toBe("later");
      expect(first!.headers.getString(headerNames.retryCount)).toBe("1");
      await first!.ack();
      await publish(queue, "sentinel");
      const second = (await again.next()).value;
      expect(bodyOf(second!)).toBe("sentinel");
      await second!.ack();
      await again.close();
    } finally {
      await t.stop();
      await connected.shutdown();
    }
  }, 60_000);
});

for (const server of servers) {
  describe(`closing a subscription (${server.name})`, () => {
    it("close gives back at once what arrived and was never handed out; what was handed out still settles", async () => {
      const queue = uniqueName("stop-buffered");
      const connecting = server.connector();
      const { connected, publish } = await connect(connecting);
      const other = await connect(connecting);
      try {
        const subscription = await connected.subscribe(queueOf(queue, 10));
        for (const body of ["1", "2", "3", "4", "5"]) await publish(queue, body);
        const handedOut = (await subscription.next()).value!;
        expect(bodyOf(handedOut)).toBe("1");
        await subscription.close();
        // The rest goes to another consumer while "1" is still open: none waits for its settle.
        const again = await other.connected.subscribe(queueOf(queue, 10));
        const rest: string[] = [];
        for (let i = 0; i < 4; i++) {
          const delivery = (await again.next()).value!;
          rest.push(bodyOf(delivery));
          await delivery.ack();
        }
        expect(rest.sort()).toEqual(["2", "3", "4", "5"]);
        // Handed out before the close, settled after it: acked, not read again.
        await handedOut.ack();
        await publish(queue, "sentinel");
        const next = (await again.next()).value!;
        expect(bodyOf(next)).toBe("sentinel");
        await next.ack();
        await again.close();
      } finally {
        await connected.shutdown();
        await other.connected.shutdown();
      }
    }, 60_000);

    it("the shutdown still closes a channel whose delivery was never settled: it comes back", async () => {
      const queue = uniqueName("stop-unsettled");
      const connecting = server.connector();
      const { connected, publish } = await connect(connecting);
      const other = await connect(connecting);
      try {
        const subscription = await connected.subscribe(queueOf(queue));
        await publish(queue, "held");
        const held = (await subscription.next()).value!;
        await subscription.close();
        await connected.shutdown();
        await expect(held.ack()).rejects.toMatchObject({ code: "closed" });
        const again = await other.connected.subscribe(queueOf(queue));
        const back = (await again.next()).value!;
        expect(bodyOf(back)).toBe("held");
        await back.ack();
        await again.close();
      } finally {
        await connected.shutdown();
        await other.connected.shutdown();
      }
    }, 60_000);

    it("a stream's delivery handed out before the close still acks after it", async () => {
      const stream = uniqueName("stop-stream");
      const connecting = server.connector();
      const { connected, publish } = await connect(connecting);
      const source = new RabbitStream(stream, { offset: "first", prefetch: 10 });
      try {
        const subscription = await connected.subscribe(source);
        for (const body of ["1", "2", "3"]) await publish(stream, body);
        const handedOut = (await subscription.next()).value!;
        expect(bodyOf(handedOut)).toBe("1");
        await subscription.close();
        await handedOut.ack();
        // A stream keeps every message: a new reader from the first offset reads all of them.
        const again = await connected.subscribe(source);
        const read: string[] = [];
        for (let i = 0; i < 3; i++) {
          const delivery = (await again.next()).value!;
          read.push(bodyOf(delivery));
          await delivery.ack();
        }
        expect(read).toEqual(["1", "2", "3"]);
        await again.close();
      } finally {
        await connected.shutdown();
        if (server.name === "real node") await deleteQueue(stream);
      }
    }, 60_000);
  });
}
