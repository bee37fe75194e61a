import type { TestApp } from "@ruststream/testing";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterEach } from "vitest";
import { type ConnectedNatsBroker, NatsBroker, type NatsBrokerOptions } from "../src/index.js";
import { deleteStreams } from "./env.live.js";

// What a live test file opens with: a broker on the shared server, and the clean-up after each test
// of what the test made there, as the server outlives the run.

/** A broker on the shared server (`NATS_URL`), `options` beside its servers. */
export function liveBroker(options: Omit<NatsBrokerOptions, "servers"> = {}): NatsBroker {
  return new NatsBroker({ ...options, servers: requireEnv("NATS_URL") });
}

/** What a test made, let go of once it ends. */
export interface MadeInTest {
  /** The streams it made (a KV bucket's is `KV_<bucket>`), deleted from the shared server. */
  readonly streams: string[];
  /** Stops `t` once the test ends; returns it. */
  app(t: TestApp): TestApp;
  /** Shuts `connected` down once the test ends; returns it. */
  connection(connected: ConnectedNatsBroker): ConnectedNatsBroker;
}

/**
 * Registers, in the test file that calls it, an `afterEach` that stops the apps and shuts down the
 * connections its test made, then deletes the streams it made: the streams go last, so no app or
 * connection still reads them, and go even when a stop fails.
 */
export function madeInEachTest(): MadeInTest {
  const apps: TestApp[] = [];
  const connections: ConnectedNatsBroker[] = [];
  const streams: string[] = [];
  afterEach(async () => {
    try {
      for (const t of apps.splice(0)) await t.stop();
      await Promise.all(connections.splice(0).map((c) => c.shutdown()));
    } finally {
      // An in-process test makes no stream on the server: no client to connect then.
      if (streams.length > 0) await deleteStreams(...streams.splice(0));
    }
  });
  return {
    streams,
    app(t) {
      apps.push(t);
      return t;
    },
    connection(connected) {
      connections.push(connected);
      return connected;
    },
  };
}
