import { describe, expect, it, vi } from "vitest";
import * as forBrokers from "../src/brokerEntry.js";
import * as core from "../src/index.js";

// Two copies of core in one process (an app's ESM import next to a broker package's CJS require)
// get two sets of classes. Loading the module again after resetting the registry makes that
// second copy here.
async function secondCopy(): Promise<typeof core> {
  vi.resetModules();
  return import("../src/index.js");
}

describe("brands across two copies of core", () => {
  it("the copies are distinct classes", async () => {
    const other = await secondCopy();
    expect(other.RustStreamError).not.toBe(core.RustStreamError);
  });

  it("recognise each other's errors, capabilities, descriptors and brokers", async () => {
    const other = await secondCopy();
    const error = new other.RustStreamError("closed", "gone");
    expect(error instanceof core.RustStreamError).toBe(false);
    expect(core.isRustStreamError(error, "closed")).toBe(true);
    expect(forBrokers.isSource(new other.MemoryTopic("t"))).toBe(true);
    const broker = new other.MemoryBroker();
    expect(forBrokers.brokerKind(broker)).toBe("memory");
    expect(forBrokers.supportsInProcess(broker)).toBe(true);
    const connected = await broker.connect();
    const subscription = await connected.subscribe("t");
    expect(core.supportsBatches(subscription)).toBe(true);
    expect(core.supportsSeek(subscription)).toBe(true);
    const publisher = await new other.MemoryPublish().pair(connected);
    expect(core.supportsTransactions(publisher)).toBe(true);
    expect(core.supportsRequest(publisher)).toBe(true);
    expect(core.supportsDescribeServer(connected)).toBe(true);
    expect(forBrokers.isTestableBroker(connected)).toBe(true);
    await connected.shutdown();
  });

  it("a guard is false for a look-alike without the mark", () => {
    const lookAlike = { seek: async () => {}, nextBatch: async () => [] };
    expect(core.supportsSeek(lookAlike as unknown as core.Subscription)).toBe(false);
    expect(core.supportsBatches(lookAlike as unknown as core.Subscription)).toBe(false);
  });
});
