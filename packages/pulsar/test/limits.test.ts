// max_message_size: a payload over the negotiated limit fails before any byte is sent, because the
// broker would drop the whole connection on the oversized frame; the connection stays up.
import { isRustStreamError } from "@ruststream/core";
import { bytes, text } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PulsarClient } from "../src/wire/index.js";
import { serviceUrl } from "./env.js";
import { wireTopic } from "./wireTopic.js";

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

describe.each([
  ["unbatched", false],
  ["batched", true],
] as const)("an oversized payload (%s)", (_name, batching) => {
  it("is refused with publish-refused, and the same connection then carries the next message", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { consumer, producer } = await wireTopic(client, "oversized", {
      producer: { batching: batching ? {} : false },
    });
    const partition = producer.partitionProducers[0]!;
    const opened = client.connectionsOpened;
    const limit = 5 * 1024 * 1024; // the standalone's maxMessageSize, which CONNECTED reported

    const refused = await producer
      .send({ payload: new Uint8Array(limit + 1) })
      .catch((e: unknown) => e);
    expect(isRustStreamError(refused, "publish-refused")).toBe(true);
    expect((refused as Error).message).toMatch(/5242880/);

    const id = await producer.send({ payload: bytes("after") });
    expect(id.entryId).toBe(0n); // nothing was written before it
    expect(client.connectionsOpened).toBe(opened);
    expect(partition.connects).toBe(1);
    expect(text((await consumer.receive({ timeoutMs: 5000 })).payload)).toBe("after");
  });
});

describe("a payload just under the limit", () => {
  it("is sent and received", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { consumer, producer } = await wireTopic(client, "large", {
      producer: { batching: false },
    });
    const payload = new Uint8Array(5 * 1024 * 1024 - 1024).fill(42);
    await producer.send({ payload });
    const m = await consumer.receive({ timeoutMs: 20_000 });
    expect(m.payload.length).toBe(payload.length);
    expect(m.payload[12345]).toBe(42);
  });
});
