import { describe, expect, it } from "vitest";
import { brokerMark, pairedHost } from "../../src/brokerEntry.js";
import { isRustStreamError, MemoryBroker } from "../../src/index.js";

interface Pairs {
  pairPublisher(): unknown;
}
interface Sends {
  send(): unknown;
}

const owner = { kind: "test", label: "Test", broker: "TestBroker" };

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return isRustStreamError(error) ? error.code : "not a RustStreamError";
  }
  return undefined;
}

describe("pairedHost", () => {
  it("takes a connection carrying the brand and the method the policy calls", () => {
    const host = { [brokerMark]: "test", send: () => "sent" };
    expect(pairedHost<typeof host>(host, owner, "send").send()).toBe("sent");
  });

  it("refuses another broker's connection, and a look-alike without the method, naming the fix", async () => {
    const memory = await new MemoryBroker().connect();
    expect(codeOf(() => pairedHost<Pairs>(memory, owner, "pairPublisher"))).toBe("foreign-value");
    expect(() => pairedHost<Pairs>(memory, owner, "pairPublisher")).toThrow(
      'a Test publish policy cannot pair with a "memory" connection: use that broker\'s own policy, or pair this one with a connected TestBroker',
    );
    expect(codeOf(() => pairedHost<Sends>({ [brokerMark]: "test" }, owner, "send"))).toBe(
      "foreign-value",
    );
    expect(codeOf(() => pairedHost<Sends>({}, owner, "send"))).toBe("foreign-value");
    await memory.shutdown();
  });
});
