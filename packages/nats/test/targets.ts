import { ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterEach } from "vitest";
import { type ConnectedNatsBroker, NatsBroker } from "../src/index.js";
import { deleteStreams } from "./env.live.js";

/** Where a file's tests run alike: the shared server, and the in-process stand-in. */
export const targets: [string, () => Promise<ConnectedNatsBroker>][] = [
  ["the real server", () => new NatsBroker({ servers: requireEnv("NATS_URL") }).connect()],
  [
    "the stand-in",
    () =>
      new NatsBroker({ servers: "nats://in-process.invalid:4222" }).connectInProcess({
        coordinator: new CountingCoordinator(),
        clock: new ManualClock(),
      }),
  ],
];

/**
 * The connections and streams a test file opens: push onto them, and each is shut down (and each
 * stream deleted from the shared server) after every test. Call once, at the file's top level.
 */
export function openedPerTest(): { connections: ConnectedNatsBroker[]; streams: string[] } {
  const connections: ConnectedNatsBroker[] = [];
  const streams: string[] = [];
  afterEach(async () => {
    await Promise.all(connections.splice(0).map((c) => c.shutdown()));
    await deleteStreams(...streams.splice(0));
  });
  return { connections, streams };
}
