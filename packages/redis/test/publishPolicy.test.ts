import { isRustStreamError, MemoryBroker, MemoryPublish, systemClock } from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { describe, expect, it } from "vitest";
import { type ConnectedRedisBroker, RedisBroker, RedisPublish } from "../src/index.js";

// The policy takes any connection and checks its brand: no server needed to see it refuse one.

async function rejection(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("the pairing was accepted");
}

function inProcess(): Promise<ConnectedRedisBroker> {
  return new RedisBroker({ group: "policy" }).connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });
}

describe("RedisPublish.pair", () => {
  it("refuses another broker's connection with foreign-value, naming the fix", async () => {
    const memory = await new MemoryBroker().connect();
    try {
      const error = await rejection(new RedisPublish().pair(memory));
      expect(isRustStreamError(error, "foreign-value")).toBe(true);
      expect((error as Error).message).toContain('"memory" connection');
      expect((error as Error).message).toContain("use that broker's own policy");
    } finally {
      await memory.shutdown();
    }
  });

  it("refuses an object that carries no broker's brand", async () => {
    const error = await rejection(new RedisPublish().pair({}));
    expect(isRustStreamError(error, "foreign-value")).toBe(true);
    expect((error as Error).message).toContain('"undefined" connection');
  });

  it("refuses an object branded redis that is no Redis connection", async () => {
    const error = await rejection(new RedisPublish().pair({ [brokerMark]: "redis" }));
    expect(isRustStreamError(error, "foreign-value")).toBe(true);
  });

  it("pairs with a Redis connection, and another broker's policy refuses it", async () => {
    const connected = await inProcess();
    try {
      const publisher = await new RedisPublish({ transport: "list" }).pair(connected);
      await publisher.publish({ name: "policy.list", payload: new Uint8Array([1]) });
      expect(connected.published("policy.list")).toHaveLength(1);
      const error = await rejection(new MemoryPublish().pair(connected));
      expect(isRustStreamError(error, "foreign-value")).toBe(true);
      expect((error as Error).message).toContain('"redis" connection');
    } finally {
      await connected.shutdown();
    }
  });
});
