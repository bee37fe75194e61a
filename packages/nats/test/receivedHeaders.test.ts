import { headers as natsHeaders } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { readHeaders } from "../src/client/receivedHeaders.js";

// The package reads a received message's header block from the client's message itself, which is
// that client version's own fields, not its API. A message it cannot read that way (another client
// version) is read through the client's public headers instead: never marked unreadable for the
// client's sake. Real messages from the server take the first way (limits.test.ts).

describe("a message whose header block the package cannot reach", () => {
  it("is read through the client's own parse", () => {
    const headers = natsHeaders();
    headers.set("x-a", "1");
    headers.append("x-a", "2");
    headers.set("x-b", "b");
    const read = readHeaders({ subject: "s", headers });
    expect(read.unreadable).toBeUndefined();
    expect(
      [...read.headers].map(([name, value]) => [name, new TextDecoder().decode(value)]),
    ).toEqual([
      ["x-a", "1"],
      ["x-b", "b"],
    ]);
  });

  it("carrying none, has none", () => {
    const read = readHeaders({ subject: "s" });
    expect(read.unreadable).toBeUndefined();
    expect(read.headers.size).toBe(0);
  });

  it("whose headers the client refuses is still delivered, marked unreadable", () => {
    const refusing = {
      subject: "s",
      get headers(): never {
        throw new Error("invalid header name");
      },
    };
    const read = readHeaders(refusing);
    expect(read.unreadable?.code).toBe("invalid-argument");
    expect(read.unreadable?.message).toContain(
      'a message on "s" carries headers that cannot be read',
    );
  });
});
