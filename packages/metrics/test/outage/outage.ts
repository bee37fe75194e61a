// A broker's server stopped under a running app, as an orchestrator and a Prometheus server see it:
// /health/ready and /health/live answered over HTTP, /metrics scraped over HTTP, each polled until
// it shows what the step waits for (or its deadline fails the test), then the server started again
// and both polled back, and a message published after the recovery handled.
import { type Broker, type RunningApp, RustStream, type SourceOf } from "@ruststream/core";
import { type HttpServer, health, serveHttp } from "@ruststream/health";
import { uniqueName } from "@ruststream/tooling-testkit";
import { expect } from "vitest";
import { prometheusMetrics } from "../../src/index.js";

/** An answer of the app's HTTP server: the status and the parsed JSON body. */
export interface Answer {
  readonly status: number;
  readonly body: { readonly state?: string; readonly why?: readonly string[] };
}

/** What a scrape of /metrics says of one broker: its series lines, with their values. */
export interface Scraped {
  /** `ruststream_broker_connected`. */
  readonly connected: number | undefined;
  /** `ruststream_broker_connection_state`, by state. */
  readonly states: Readonly<Record<string, number>>;
  /** The lines themselves, for the report. */
  readonly lines: readonly string[];
}

/** One moment of the outage: what readiness, liveness and the scrape said. */
export interface Seen {
  readonly ready: Answer;
  readonly live: Answer;
  readonly scraped: Scraped;
  /** Milliseconds since the step began. */
  readonly afterMs: number;
}

export interface OutageSubject {
  /** The app: one subscriber, whose handler pushes each message into `handled`. */
  readonly app: RustStream;
  readonly handled: unknown[];
  /** The broker's name in the events and the series: its kind (`redis`). */
  readonly broker: string;
  /**
   * Stops the broker's server, runs `whileDown` once it is down, and starts it again (whether
   * `whileDown` resolved or threw: the server may be one other tests share), resolving once it
   * serves; rethrows what `whileDown` threw.
   */
  outage(whileDown: () => Promise<void>): Promise<void>;
  /** Publishes `value` where the subscriber reads. */
  publish(running: RunningApp, value: unknown): Promise<void>;
  /** How long each step may wait for the app to see it (the client's own retry cadence). */
  readonly deadlineMs: number;
}

/**
 * The app of an outage test: `broker` with one subscriber on `source`, whose handler records each
 * message, and a publish through the broker's default policy to `name` (where `source` reads).
 */
export function subscribedApp<TBroker extends Broker>(
  broker: TBroker,
  source: string | SourceOf<TBroker>,
  name: string,
): Pick<OutageSubject, "app" | "handled" | "publish"> {
  const handled: unknown[] = [];
  const app = new RustStream({ name: uniqueName("outage"), version: "1.0.0" }).broker(
    broker,
    (b) => {
      b.subscriber(source).handle((message) => {
        handled.push(message);
      });
    },
  );
  return {
    app,
    handled,
    publish: async (running, value) => {
      await running.publish(name, value);
    },
  };
}

export interface OutageRecord {
  readonly before: Seen;
  readonly during: Seen;
  readonly after: Seen;
}

async function answer(server: HttpServer, path: string): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

/** Reads the broker's connection series from a real scrape of /metrics. */
async function scrape(server: HttpServer, broker: string): Promise<Scraped> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const lines = text
    .split("\n")
    .filter(
      (line) => line.startsWith("ruststream_broker_connect") && line.includes(`broker="${broker}"`),
    );
  const states: Record<string, number> = {};
  let connected: number | undefined;
  for (const line of lines) {
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    const state = /state="([^"]+)"/.exec(line)?.[1];
    if (state !== undefined) states[state] = value;
    else connected = value;
  }
  return { connected, states, lines };
}

/** Polls the three endpoints until `until` holds of what they say; past `deadlineMs` it throws. */
export async function poll(
  server: HttpServer,
  broker: string,
  what: string,
  deadlineMs: number,
  until: (seen: Seen) => boolean,
): Promise<Seen> {
  const began = Date.now();
  for (;;) {
    const [ready, live, scraped] = await Promise.all([
      answer(server, "/health/ready"),
      answer(server, "/health/live"),
      scrape(server, broker),
    ]);
    const seen = { ready, live, scraped, afterMs: Date.now() - began };
    if (until(seen)) return seen;
    if (Date.now() - began > deadlineMs) {
      throw new Error(
        `${what}: not seen within ${deadlineMs} ms; last seen ${JSON.stringify(seen, null, 1)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The scrape shows `state` alone: 1 there, 0 on every other state. */
export const only = (scraped: Scraped, state: string) =>
  scraped.states[state] === 1 &&
  Object.entries(scraped.states).every(([s, value]) => value === (s === state ? 1 : 0));

/** Serves `app`'s health probes and metrics on one HTTP server, on a free port. */
export function serve(app: RustStream): Promise<HttpServer> {
  const probes = health(app);
  const metrics = prometheusMetrics(app);
  return serveHttp({ port: 0, routes: { ...probes.routes, ...metrics.routes } });
}

/**
 * Runs the app with health and metrics served over HTTP, stops the broker's server, waits until
 * readiness and the scrape show the connection reconnecting, starts the server again, waits until
 * both show it connected, and has a message published then handled. Answers what it saw at each step.
 */
export async function throughOutage(subject: OutageSubject): Promise<OutageRecord> {
  const { app, broker, deadlineMs } = subject;
  const server = await serve(app);
  const running = await app.start();
  try {
    const connected = (seen: Seen) =>
      seen.ready.status === 200 && seen.scraped.connected === 1 && only(seen.scraped, "connected");
    const before = await poll(server, broker, "the app ready", deadlineMs, connected);

    let during: Seen | undefined;
    await subject.outage(async () => {
      during = await poll(
        server,
        broker,
        `${broker} reconnecting, after its server stopped`,
        deadlineMs,
        (seen) =>
          seen.ready.status === 503 &&
          seen.scraped.connected === 0 &&
          only(seen.scraped, "reconnecting"),
      );
    });
    if (during === undefined) throw new Error("the outage never ran its whileDown");

    const after = await poll(
      server,
      broker,
      `${broker} connected again, after its server started`,
      deadlineMs,
      connected,
    );

    const sent = subject.handled.length;
    await subject.publish(running, { after: "recovery" });
    const began = Date.now();
    while (subject.handled.length === sent) {
      if (Date.now() - began > deadlineMs) {
        throw new Error(
          `the message published after the recovery was not handled in ${deadlineMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const record = { before, during, after };
    process.stderr.write(`[outage ${broker}] ${JSON.stringify(record)}\n`);
    return record;
  } finally {
    await running.stop();
    await server.close();
  }
}

/**
 * Runs `throughOutage` and checks what every outage test expects of it: ready before; while the
 * server is down, not ready because the broker is reconnecting (the `why` naming it), and still
 * live; ready again after; and the one message published after the recovery handled.
 */
export async function expectRecovery(subject: OutageSubject): Promise<OutageRecord> {
  const seen = await throughOutage(subject);
  expect(seen.before.ready).toEqual({ status: 200, body: { ready: true, state: "ready" } });
  expect(seen.during.ready.body.why).toEqual([
    expect.stringMatching(new RegExp(`^broker ${subject.broker} is reconnecting: `)),
  ]);
  expect(seen.during.live.status).toBe(200);
  expect(seen.after.ready.status).toBe(200);
  expect(subject.handled).toEqual([{ after: "recovery" }]);
  return seen;
}
