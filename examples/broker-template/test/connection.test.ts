import { isRustStreamError, MemoryTopic } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { Channel, ChannelBroker } from "../src/index.js";

async function codeOf(work: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await work();
  } catch (error) {
    return isRustStreamError(error) ? error.code : "not a RustStreamError";
  }
  return undefined;
}

// The connection's checks come from ConnectionBase: the template words them as every broker does.
describe("the channel connection", () => {
  it("refuses another broker's descriptor, even one that republishes to an address as a Channel does", async () => {
    const connected = await new ChannelBroker({ address: "connection-test" }).connect();
    const subscription = await connected.subscribe(new Channel("orders"));
    await subscription.close();
    // A memory topic is an addressed source too; it names another broker's topic, not a channel.
    expect(await codeOf(() => connected.subscribe(new MemoryTopic("orders") as never))).toBe(
      "foreign-value",
    );
    await connected.shutdown();
  });

  it("fails every use after shutdown with `closed`, in the words every broker uses", async () => {
    const connected = await new ChannelBroker({ address: "connection-test" }).connect();
    const first = connected.shutdown();
    expect(connected.shutdown()).toBe(first);
    await first;
    await expect(connected.subscribe("orders")).rejects.toThrow(
      "this channel broker connection was used after shutdown(): connect again (broker.connect()) and use the new connection",
    );
  });
});
