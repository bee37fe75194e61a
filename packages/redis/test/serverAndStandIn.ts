import { systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect } from "vitest";
import { type ConnectedRedisBroker, RedisBroker } from "../src/index.js";

/**
 * Runs `script` against the real server, then against the in-process stand-in, which must log the
 * same; answers the server's log. One key for both (named from `label`): the stand-in is a server of
 * its own, and what the script logs may name the key.
 */
export async function sameOnServerAndStandIn<T>(
  label: string,
  script: (connected: ConnectedRedisBroker, key: string) => Promise<T>,
): Promise<T> {
  const key = uniqueName(label.replace(/\W/g, ""));
  const server = await new RedisBroker({ url: requireEnv("REDIS_URL") }).connect();
  const live = await script(server, key).finally(() => server.shutdown());
  const stand = await new RedisBroker().connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });
  const local = await script(stand, key).finally(() => stand.shutdown());
  expect(local).toEqual(live);
  return live;
}
