// Readiness as an orchestrator sees it: /health/ready polled over HTTP while the app starts, serves
// and stops, and after a subscription has ended.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Broker,
  type ConnectedBroker,
  type ConnectionListener,
  type ConnectOptions,
  MemoryBroker,
  RustStream,
} from "@ruststream/core";
import { brokerMark } from "@ruststream/core/broker";
import { FileBroker, FileStream } from "@ruststream/file";
import { FileProducer } from "@ruststream/file/format";
import { afterEach, describe, expect, test } from "vitest";
import { type HttpServer, health, serveHttp } from "../src/index.js";

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Probe {
  readonly status: number;
  readonly state: string;
  readonly why?: readonly string[];
}

async function probe(url: string, path: string): Promise<Probe> {
  const response = await fetch(`${url}${path}`);
  const body = (await response.json()) as { state: string; why?: string[] };
  return { status: response.status, state: body.state, ...(body.why ? { why: body.why } : {}) };
}

/** Polls a path over HTTP in the background and keeps each change of answer, in order. */
function poller(url: string, path: string) {
  const seen: string[] = [];
  let last: Probe | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      last = await probe(url, path);
      const line = `${last.status} ${last.state}`;
      if (seen.at(-1) !== line) seen.push(line);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return {
    seen,
    /** Waits until the poller has seen `line` (so the test moves on only once it was observed). */
    async saw(line: string): Promise<void> {
      const deadline = Date.now() + 5000;
      while (!seen.includes(line)) {
        if (Date.now() > deadline) {
          throw new Error(`never saw ${line}; saw ${seen.join(" -> ")}`);
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    },
    last: () => last,
    async stop(): Promise<void> {
      running = false;
      await loop;
    },
  };
}

/**
 * A memory broker whose client the test drives: it keeps the listener the app connects it with, as
 * a broker's client layer reports to it.
 */
class DrivenBroker implements Broker {
  readonly [brokerMark] = "memory";
  client: ConnectionListener | undefined;
  readonly #inner = new MemoryBroker();

  async connect(options?: ConnectOptions): Promise<ConnectedBroker> {
    this.client = options?.onState;
    return this.#inner.connect();
  }
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe("readiness over HTTP", () => {
  test("503 before and while the app starts, 200 once started, 503 while it stops and after", async () => {
    const startup = gate();
    const handlerRuns = gate();
    const release = gate();
    const app = new RustStream({ name: "orders", version: "1.0.0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("orders").handle(async () => {
          handlerRuns.open();
          await release.opened;
        });
      })
      // A startup task (a cache to warm, say) the app is not ready before.
      .afterStartup(() => startup.opened);
    const probes = health(app);
    server = await serveHttp({ port: 0, routes: probes.routes });
    const ready = poller(server.url, "/health/ready");
    const live = poller(server.url, "/health/live");

    await Promise.all([ready.saw("503 idle"), live.saw("200 idle")]);
    expect(probes.notReady).toEqual([
      "the app has not been started since health(app) was called: call health(app) before app.start()",
    ]);
    const starting = app.start();
    await Promise.all([ready.saw("503 starting"), live.saw("200 starting")]);
    expect(ready.last()?.why?.[0]).toMatch(
      /starting \(brokers connected: memory; subscriptions started: orders\)/,
    );
    startup.open();
    const running = await starting;
    await Promise.all([ready.saw("200 ready"), live.saw("200 ready")]);
    expect(probes.ready).toBe(true);

    // A handler still running holds the app in stopping while it drains.
    await running.publish("orders", { id: 1 });
    await handlerRuns.opened;
    const stopping = running.stop();
    await Promise.all([ready.saw("503 stopping"), live.saw("200 stopping")]);
    expect(probes.live).toBe(true);
    release.open();
    await stopping;
    await ready.saw("503 stopped");
    await live.saw("503 stopped");
    await ready.stop();
    await live.stop();

    expect(ready.seen).toEqual([
      "503 idle",
      "503 starting",
      "200 ready",
      "503 stopping",
      "503 stopped",
    ]);
    // Alive from before the start until the app has stopped.
    expect(live.seen).toEqual([
      "200 idle",
      "200 starting",
      "200 ready",
      "200 stopping",
      "503 stopped",
    ]);
    expect(await probe(server.url, "/health/ready")).toEqual({
      status: 503,
      state: "stopped",
      why: ["the app has stopped"],
    });
  });

  test("a start that fails is not live, and says why", async () => {
    const app = new RustStream({ name: "orders", version: "1.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("orders"); // no handler: refused at start
      },
    );
    const probes = health(app);
    server = await serveHttp({ port: 0, routes: probes.routes });
    await expect(app.start()).rejects.toThrow("no handler");
    const answer = await probe(server.url, "/health/ready");
    expect(answer.status).toBe(503);
    expect(answer.why?.[0]).toMatch(/stopped on a failure: .*no handler/);
    expect(await probe(server.url, "/health/live")).toEqual({
      status: 503,
      state: "stopped",
      why: [expect.stringMatching(/stopped on a failure: .*no handler/)],
    });
  });

  test("a broker connection down: not ready, naming it; lost: not live either; back: both again", async () => {
    const broker = new DrivenBroker();
    const app = new RustStream({ name: "orders", version: "1.0.0" }).broker(broker, (b) => {
      b.subscriber("orders").handle(() => {});
    });
    const probes = health(app);
    server = await serveHttp({ port: 0, routes: probes.routes });
    const running = await app.start();
    expect((await probe(server.url, "/health/ready")).status).toBe(200);

    broker.client?.({ state: "reconnecting", reason: "connect ECONNREFUSED 127.0.0.1:6379" });
    expect(await probe(server.url, "/health/ready")).toEqual({
      status: 503,
      state: "ready",
      why: ["broker memory is reconnecting: connect ECONNREFUSED 127.0.0.1:6379"],
    });
    // Reconnecting is the client's own work: the app is alive and waits for it.
    expect(await probe(server.url, "/health/live")).toEqual({ status: 200, state: "ready" });

    broker.client?.({ state: "lost", reason: "WRONGPASS invalid username-password pair" });
    const lost = ["broker memory is lost: WRONGPASS invalid username-password pair"];
    expect(await probe(server.url, "/health/ready")).toEqual({
      status: 503,
      state: "ready",
      why: lost,
    });
    expect(await probe(server.url, "/health/live")).toEqual({
      status: 503,
      state: "ready",
      why: lost,
    });
    expect([probes.live, probes.ready, probes.notLive]).toEqual([false, false, lost]);

    broker.client?.({ state: "connected" });
    expect(await probe(server.url, "/health/ready")).toEqual({ status: 200, state: "ready" });
    expect(await probe(server.url, "/health/live")).toEqual({ status: 200, state: "ready" });
    await running.stop();
  });

  test("work beside the handlers failing: not ready, naming each source and its last error, still live; recovered: ready again", async () => {
    const app = new RustStream({ name: "orders", version: "1.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("orders").handle(() => {});
      },
    );
    const probes = health(app);
    server = await serveHttp({ port: 0, routes: probes.routes });
    const running = await app.start();
    expect((await probe(server.url, "/health/ready")).status).toBe(200);

    running.reportBackgroundFailure({
      source: "outbox:kafka",
      error: new Error("the outbox connection is reconnecting (connect ECONNREFUSED)"),
    });
    running.reportBackgroundFailure({
      source: "outbox:kafka",
      error: new Error("the outbox connection is lost (password authentication failed)"),
    });
    running.reportBackgroundFailure({
      source: "outbox:redis",
      error: new Error('claiming rows of "redis" failed: relation does not exist'),
    });
    const both = [
      "outbox:kafka is failing: the outbox connection is lost (password authentication failed)",
      'outbox:redis is failing: claiming rows of "redis" failed: relation does not exist',
    ];
    expect(await probe(server.url, "/health/ready")).toEqual({
      status: 503,
      state: "ready",
      why: both,
    });
    // The work retries by itself: the app stays live.
    expect(await probe(server.url, "/health/live")).toEqual({ status: 200, state: "ready" });
    expect([probes.live, probes.ready, probes.notReady]).toEqual([true, false, both]);

    running.reportBackgroundRecovered({ source: "outbox:kafka" });
    expect(await probe(server.url, "/health/ready")).toEqual({
      status: 503,
      state: "ready",
      why: [both[1]],
    });
    running.reportBackgroundRecovered({ source: "outbox:redis" });
    expect(await probe(server.url, "/health/ready")).toEqual({ status: 200, state: "ready" });

    // A failure left at the stop says nothing of the next run.
    running.reportBackgroundFailure({ source: "outbox:kafka", error: new Error("gone") });
    await running.stop();
    const again = await app.start();
    expect(await probe(server.url, "/health/ready")).toEqual({ status: 200, state: "ready" });
    await again.stop();
  });

  test("not ready once a subscription has ended: a stream file its writer closed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rs-health-"));
    try {
      const path = join(dir, "events.ss");
      const seen: unknown[] = [];
      const app = new RustStream({ name: "audit", version: "1.0.0" }).broker(
        new FileBroker({ path }),
        (b) => {
          b.subscriber(new FileStream("events", { start: "beginning" })).handle((m) => {
            seen.push(m);
          });
          b.subscriber(new FileStream("other", { start: "beginning" })).handle(() => {});
        },
      );
      const probes = health(app);
      server = await serveHttp({ port: 0, routes: probes.routes });
      const running = await app.start();
      expect((await probe(server.url, "/health/ready")).status).toBe(200);

      // Another process's writer appends two events, then ends the file with its marker.
      const writer = FileProducer.open(path);
      await writer.send("events", new TextEncoder().encode('{"n":1}'));
      await writer.send("events", new TextEncoder().encode('{"n":2}'));
      await writer.end();

      const ready = poller(server.url, "/health/ready");
      await ready.saw("503 ready");
      await ready.stop();
      // Each subscription reaches the marker on its own, in either order.
      const deadline = Date.now() + 5000;
      while (probes.notReady.length < 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
      const answer = await probe(server.url, "/health/ready");
      expect([...(answer.why ?? [])].sort()).toEqual([
        "the subscription of events has ended: it receives nothing more",
        "the subscription of other has ended: it receives nothing more",
      ]);
      expect(probes.ready).toBe(false);
      // The app still runs (and drains on stop): alive, only not ready.
      expect((await probe(server.url, "/health/live")).status).toBe(200);
      await running.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
