import { expect, it } from "vitest";
import { isRustStreamError, MemoryBroker, MemoryPublish } from "../src/index.js";

it("the memory publish policy refuses another broker's connection, naming the fix", async () => {
  const foreign = { state: "connected", pairPublisher: () => ({}) };
  const error = await new MemoryPublish().pair(foreign).catch((e: unknown) => e);
  expect(isRustStreamError(error, "foreign-value"), String(error)).toBe(true);
  expect(String(error)).toMatch(/use that broker's own policy/);
  const connected = await new MemoryBroker().connect();
  await expect(new MemoryPublish().pair(connected)).resolves.toBeDefined();
  await connected.shutdown();
});
