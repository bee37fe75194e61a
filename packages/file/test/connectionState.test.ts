// The file broker's connection state: no server stands between the process and its file, so it is
// `connected` from connect() until shutdown(), whose `closed` the connecting side's listener hears.
import { join } from "node:path";
import type { ConnectionChange } from "@ruststream/core";
import { systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { describe, expect, it } from "vitest";
import { FileBroker } from "../src/index.js";
import { tempDir, utf8 } from "./tempDir.js";

describe("the file broker's connection state", () => {
  it.each([
    "connect",
    "connectInProcess",
  ] as const)("%s: connected while it publishes, closed at shutdown, heard once", async (how) => {
    const heard: ConnectionChange[] = [];
    const onState = (change: ConnectionChange) => heard.push(change);
    const broker = new FileBroker({ path: join(tempDir(), "state.ss") });
    const connected =
      how === "connect"
        ? await broker.connect({ onState })
        : await broker.connectInProcess({
            onState,
            clock: systemClock,
            coordinator: new CountingCoordinator(),
          });
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: "events", payload: utf8("1") });
    expect(connected.state).toBe("connected");
    await connected.shutdown();
    await connected.shutdown();
    expect(connected.state).toBe("closed");
    expect(heard).toEqual([{ state: "closed" }]);
  });
});
