// The wire client's state (client.states, what the connection reports), from its producers' and
// consumers' attachments, against scripted brokers: a connection cut is reconnecting at once until
// they are attached again; a topic unloaded and taken back at once is no outage; a reattach the
// broker refuses for good is lost.
import type { LinkChange } from "@ruststream/core/broker";
import { afterEach, describe, expect, it } from "vitest";
import { CommandType, ServerError } from "../src/wire/commands/enums.js";
import { PulsarClient } from "../src/wire/index.js";
import { eventually } from "./env.js";
import { type ScriptedBroker, scriptedBroker } from "./scriptedBroker.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function broker(...args: Parameters<typeof scriptedBroker>): Promise<ScriptedBroker> {
  const b = await scriptedBroker(...args);
  cleanups.push(() => b.close());
  return b;
}

/** A client on `b`, quick to retry, and every change of its state as it comes. */
function client(b: ScriptedBroker): { client: PulsarClient; heard: string[] } {
  const c = new PulsarClient({ serviceUrl: b.url, backoff: { initialMs: 10, maxMs: 50 } });
  cleanups.push(() => c.close());
  const heard: string[] = [];
  c.states.follow((change: LinkChange) =>
    heard.push(`${change.state}${change.reason === undefined ? "" : `: ${change.reason}`}`),
  );
  return { client: c, heard };
}

describe("the wire client's state", () => {
  it("a connection cut: reconnecting at once, with why, until the producer is attached again", async () => {
    const b = await broker();
    const { client: c, heard } = client(b);
    const producer = await c.createProducer({ topic: "cut", batching: false });
    b.connections[0]!.socket.destroy();
    await eventually(() => heard.length >= 2, 5000, "reconnecting, then connected");
    expect(heard).toEqual([`reconnecting: connection to ${b.url} closed by the peer`, "connected"]);
    expect((await producer.send({ payload: new Uint8Array([1]) })).entryId).toBe(0n);
  });

  it("a topic unloaded and attached again at once is no outage: nothing heard", async () => {
    let producers = 0;
    const b = await broker((command) => {
      if (command.type === CommandType.PRODUCER) producers++;
      return false;
    });
    const { client: c, heard } = client(b);
    const producer = await c.createProducer({ topic: "unloaded", batching: false });
    b.connections[0]!.reply({
      type: CommandType.CLOSE_PRODUCER,
      closeProducer: { producerId: 0, requestId: 0 },
    });
    await eventually(() => producers >= 2, 5000, "the producer attached again");
    expect((await producer.send({ payload: new Uint8Array([1]) })).entryId).toBe(0n);
    expect(heard).toEqual([]);
  });

  it("a reattach the broker refuses for good: lost, with the broker's answer; the producer closed, it counts no more", async () => {
    let producers = 0;
    const b = await broker((command, connection) => {
      if (command.type !== CommandType.PRODUCER) return false;
      producers++;
      if (producers === 1) return false;
      connection.reply({
        type: CommandType.ERROR,
        error: {
          requestId: command.producer!.requestId,
          error: ServerError.AuthorizationError,
          message: "the role may not produce here any more",
        },
      });
      return true;
    });
    const { client: c, heard } = client(b);
    const producer = await c.createProducer({ topic: "refused", batching: false });
    b.connections[0]!.socket.destroy();
    await eventually(() => heard.length >= 2, 5000, "reconnecting, then lost");
    expect(heard).toEqual([
      `reconnecting: connection to ${b.url} closed by the peer`,
      expect.stringMatching(
        /^lost: persistent:\/\/public\/default\/refused was refused: .*the role may not produce here any more/,
      ),
    ]);
    await producer.close();
    expect(heard.at(-1)).toBe("connected");
  });
});
