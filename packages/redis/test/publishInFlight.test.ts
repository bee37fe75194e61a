import {
  HeaderMap,
  isRustStreamError,
  type OutgoingMessage,
  type Receipt,
  systemClock,
} from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { resolveConnection } from "../src/client/connectionOptions.js";
import { type ConnectedRedisBroker, RedisBroker, RedisPublish } from "../src/index.js";
import { parseEntry } from "../src/stream/entry.js";
import { countingWrites } from "./socketWrites.js";

// Publishes in flight together, as a service publishing under load has them: on one server the
// XADDs of one tick leave in one socket write (IoredisLink), and still each publish is confirmed by
// its own reply (its entry's id), in the order they were made, and a publish the server refuses
// fails alone. The in-process stand-in answers the same, without a socket.

const inFlight = 300;
/** Every 50th publish goes to a key holding a list: the server answers that XADD with WRONGTYPE. */
const refused = (i: number) => i % 50 === 7;

function message(stream: string, wrongKey: string, i: number): OutgoingMessage {
  const headers = new HeaderMap();
  headers.set("n", String(i));
  return {
    name: refused(i) ? wrongKey : stream,
    payload: Buffer.from(`message ${i}`),
    headers,
    partitionKey: `key-${i % 7}`,
  };
}

/** `inFlight` publishes started in one tick; what each settled to. */
async function publishTogether(
  connected: ConnectedRedisBroker,
  stream: string,
  wrongKey: string,
): Promise<PromiseSettledResult<Receipt>[]> {
  const publisher = await new RedisPublish().pair(connected);
  return Promise.allSettled(
    Array.from({ length: inFlight }, (_, i) => publisher.publish(message(stream, wrongKey, i))),
  );
}

/** Each publish confirmed with its own entry, in order; each refused one failed alone. */
async function expectEachConfirmed(
  connected: ConnectedRedisBroker,
  stream: string,
  settled: PromiseSettledResult<Receipt>[],
): Promise<void> {
  const positions: string[] = [];
  settled.forEach((outcome, i) => {
    if (refused(i)) {
      expect(outcome.status, `publish ${i}`).toBe("rejected");
      const error = (outcome as PromiseRejectedResult).reason;
      expect(isRustStreamError(error, "broker-failure")).toBe(true);
      expect((error as Error).message).toContain("WRONGTYPE");
      return;
    }
    expect(outcome.status, `publish ${i}`).toBe("fulfilled");
    const receipt = (outcome as PromiseFulfilledResult<Receipt>).value;
    expect(receipt.name).toBe(stream);
    positions.push(receipt.position!);
  });
  // The stream holds exactly the confirmed ones, in the order they were published, each at the id
  // its own receipt named.
  const entries = ((await connected.link.call("XRANGE", [stream, "-", "+"])) as unknown[]).map(
    (reply) => parseEntry(reply as never)!,
  );
  const expected = settled.map((_, i) => i).filter((i) => !refused(i));
  expect(entries.map((e) => Buffer.from(e.payload).toString())).toEqual(
    expected.map((i) => `message ${i}`),
  );
  expect(entries.map((e) => e.headers.getString("n"))).toEqual(expected.map(String));
  expect(entries.map((e) => e.headers.getString("redis-partition-key"))).toEqual(
    expected.map((i) => `key-${i % 7}`),
  );
  expect(entries.map((e) => e.id)).toEqual(positions);
}

async function listAt(connected: ConnectedRedisBroker, key: string): Promise<void> {
  const lists = await new RedisPublish({ transport: "list" }).pair(connected);
  await lists.publish({ name: key, payload: Buffer.from("a list") });
}

describe("publishes in flight on one server", () => {
  it("leave in one write, each confirmed by its own entry in order, a refused one failing alone", async () => {
    const url = requireEnv("REDIS_URL");
    const settings = resolveConnection({ url });
    if (settings.kind !== "server") throw new Error("REDIS_URL resolved to no single server");
    const connected = await new RedisBroker({ url }).connect();
    const stream = uniqueName("inflight");
    const wrongKey = uniqueName("inflight-list");
    try {
      await listAt(connected, wrongKey);
      const { result, writes } = await countingWrites(settings.port, () =>
        publishTogether(connected, stream, wrongKey),
      );
      // Every XADD of the tick, the refused ones included, in one write.
      expect(writes).toBe(1);
      await expectEachConfirmed(connected, stream, result);
    } finally {
      await connected.link.call("DEL", [stream, wrongKey]);
      await connected.shutdown();
    }
  });
});

describe("publishes in flight on the in-process stand-in", () => {
  it("are each confirmed by its own entry in order, a refused one failing alone", async () => {
    const connected = await new RedisBroker({ group: "inflight" }).connectInProcess({
      coordinator: new CountingCoordinator(),
      clock: systemClock,
    });
    try {
      await listAt(connected, "inflight.list");
      await expectEachConfirmed(
        connected,
        "inflight.stream",
        await publishTogether(connected, "inflight.stream", "inflight.list"),
      );
    } finally {
      await connected.shutdown();
    }
  });
});
