// The backlog gauge: read from the brokers at the scrape, on the real PostgreSQL server through a
// real HTTP scrape; no sample for a broker without the member; a slow or failing answer bounded and
// counted, never failing the scrape.
import {
  type Broker,
  type ConnectedBroker,
  type ConnectOptions,
  isRustStreamError,
  MemoryBroker,
  RustStream,
} from "@ruststream/core";
import { backlogMark, brokerMark } from "@ruststream/core/broker";
import { serveHttp } from "@ruststream/health";
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { backlogLines, until } from "./scrapeSteps.js";

test("a scrape of an app on PostgreSQL shows its queue's backlog by state and its claim's wait; the memory subscriber beside it has neither", async () => {
  const queue = uniqueName("gauge");
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "gauge", version: "1.0.0" })
    .broker(
      new PostgresBroker({
        url: requireEnv("POSTGRES_URL"),
        table: "metrics_backlog",
        ensureSchema: true,
      }),
      (b) => {
        b.subscriber<string>(new PostgresQueue(queue, { pollMs: 200 }))
          .maxAttempts(3)
          .deadLetter(`${queue}-dlq`)
          .handle(async (m) => {
            entered.push(m);
            await held;
          });
      },
    )
    .broker(new MemoryBroker(), (b) => {
      b.subscriber("local").handle(() => {});
    });
  const metrics = prometheusMetrics(app);
  const server = await serveHttp({ port: 0, routes: metrics.routes });
  const running = await app.start();
  try {
    // One worker: held in its handler, the pull claims nothing more.
    await running.publish(queue, "held");
    await until("the handler", () => entered.length === 1);
    await running.publish(queue, "a");
    await running.publish(queue, "b");
    await running.publish(queue, "later", { options: { delayMs: 60_000 } });
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(backlogLines(text)).toEqual(
      [
        `ruststream_backlog{name="${queue}",state="ready"} 2`,
        `ruststream_backlog{name="${queue}",state="scheduled"} 1`,
        `ruststream_backlog{name="${queue}",state="leased"} 1`,
        `ruststream_backlog{name="${queue}",state="dead-lettered"} 0`,
      ].sort(),
    );
    // The memory subscriber has series of its own, and no backlog sample.
    expect(text).toContain('ruststream_messages_in_flight{name="local"} 0');
    expect(text).not.toContain('ruststream_backlog{name="local"');
    expect(text).not.toContain("ruststream_backlog_failures_total{");
    // The held row's wait from its run time to its claim: one sample of the queue's, none of the
    // memory subscriber's (its broker does not tell it).
    expect(text).toContain(`ruststream_wait_seconds_count{name="${queue}"} 1`);
    expect(text).not.toContain('ruststream_wait_seconds_count{name="local"}');
  } finally {
    release();
    await running.stop();
  }
  // A stopped app's subscriptions are closed: no backlog is read, and none failed.
  const after = await (await fetch(`${server.url}/metrics`)).text();
  expect(backlogLines(after)).toEqual([]);
  await server.close();
});

/** A memory broker whose subscriptions answer the backlog with `answer`. */
class AnsweringBroker implements Broker {
  readonly [brokerMark] = "memory";
  readonly #inner = new MemoryBroker();
  readonly #answer: () => Promise<{ ready: number }>;

  constructor(answer: () => Promise<{ ready: number }>) {
    this.#answer = answer;
  }

  async connect(options?: ConnectOptions): Promise<ConnectedBroker> {
    const connected = await this.#inner.connect(options);
    const subscribe = connected.subscribe.bind(connected);
    connected.subscribe = async (source) =>
      Object.assign(await subscribe(source), {
        [backlogMark]: true as const,
        backlog: this.#answer,
      });
    return connected;
  }
}

test("a broker that answers late or fails gives no sample, counted by reason; the scrape and the others' samples go on", async () => {
  const app = new RustStream({ name: "slow", version: "1.0.0" })
    .broker(new AnsweringBroker(async () => ({ ready: 7 })), (b) => {
      b.subscriber("quick").handle(() => {});
    })
    .broker(new AnsweringBroker(() => new Promise(() => {})), (b) => {
      b.subscriber("stuck").handle(() => {});
    })
    .broker(
      new AnsweringBroker(async () => {
        throw new Error("the server is away");
      }),
      (b) => {
        b.subscriber("failing").handle(() => {});
      },
    );
  const metrics = prometheusMetrics(app, { backlogTimeoutMs: 100 });
  const running = await app.start();
  try {
    const first = await metrics.text();
    expect(backlogLines(first)).toEqual([
      'ruststream_backlog_failures_total{name="failing",reason="error"} 1',
      'ruststream_backlog_failures_total{name="stuck",reason="timeout"} 1',
      'ruststream_backlog{name="quick",state="ready"} 7',
    ]);
    // Counted per scrape: a second one adds one of each.
    expect(await metrics.text()).toContain(
      'ruststream_backlog_failures_total{name="stuck",reason="timeout"} 2',
    );
  } finally {
    await running.stop();
  }
});

test("a backlog timeout that is no positive number is refused, naming the fix", () => {
  const app = new RustStream({ name: "bad", version: "1.0.0" });
  const error = (() => {
    try {
      prometheusMetrics(app, { backlogTimeoutMs: 0 });
    } catch (e) {
      return e;
    }
  })();
  expect(isRustStreamError(error, "invalid-argument")).toBe(true);
  expect(String(error)).toMatch(/backlogTimeoutMs: 0 .*give a number of milliseconds above 0/);
});
