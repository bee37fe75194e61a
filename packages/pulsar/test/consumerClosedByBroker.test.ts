// A consumer the broker closes (a topic unload, an ownership change), against a scripted broker, so
// the close falls exactly between a message taken and its ack, which a real unload only sometimes
// does. What the broker had pushed and was not acked comes again to the next subscribe, so:
// nothing queued from the closed subscribe is handed out, and an ack made while detached reaches
// the broker on the next subscribe before its FLOW, so the broker does not redeliver that message.

import { bytes, text } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { CommandType } from "../src/wire/commands/enums.js";
import type { BaseCommand } from "../src/wire/commands/shapes.js";
import { encodeMessageSection, encodePayloadFrame } from "../src/wire/frame.js";
import { PulsarClient } from "../src/wire/index.js";
import { eventually } from "./env.js";
import { type ScriptedBroker, scriptedBroker } from "./scriptedBroker.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function message(consumerId: number, entryId: bigint, payload: string): Uint8Array {
  const section = encodeMessageSection(
    { producerName: "scripted", sequenceId: entryId, publishTime: 1 },
    bytes(payload),
  );
  return encodePayloadFrame(
    { type: CommandType.MESSAGE, message: { consumerId, messageId: { ledgerId: 7n, entryId } } },
    section,
  );
}

describe("a consumer closed by the broker", () => {
  it("hands out nothing queued from the closed subscribe, and sends an ack made meanwhile before the next FLOW", async () => {
    let subscribes = 0;
    let releaseSecond: (() => void) | undefined;
    const b: ScriptedBroker = await scriptedBroker((command, connection) => {
      if (command.type === CommandType.SUBSCRIBE) {
        subscribes++;
        const success: BaseCommand = {
          type: CommandType.SUCCESS,
          success: { requestId: command.subscribe!.requestId },
        };
        // The second subscribe is answered when the test says, so the test acts while detached.
        if (subscribes === 1) connection.reply(success);
        else releaseSecond = () => connection.reply(success);
        return true;
      }
      if (command.type === CommandType.FLOW && subscribes === 1) {
        const consumerId = command.flow!.consumerId;
        connection.socket.write(
          Buffer.concat([0n, 1n, 2n].map((e) => message(consumerId, e, `m${e}`))),
        );
        return true;
      }
      if (command.type === CommandType.CLOSE_CONSUMER) {
        connection.reply({
          type: CommandType.SUCCESS,
          success: { requestId: command.closeConsumer!.requestId },
        });
        return true;
      }
      return command.type === CommandType.FLOW || command.type === CommandType.ACK;
    });
    cleanups.push(() => b.close());
    const client = new PulsarClient({ serviceUrl: b.url, backoff: { initialMs: 10, maxMs: 20 } });
    cleanups.push(() => client.close());
    const consumer = await client.subscribe({
      topic: "closed-consumer",
      subscription: "s",
      subscriptionType: "Shared",
    });
    const first = await consumer.receive({ timeoutMs: 5000 });
    expect(text(first.payload)).toBe("m0");
    await eventually(() => consumer.queued === 2, 5000, "m1 and m2 queued");

    const connection = b.connections[0]!;
    const firstConsumerId = connection.received.find((c) => c.type === CommandType.SUBSCRIBE)!
      .subscribe!.consumerId;
    connection.reply({
      type: CommandType.CLOSE_CONSUMER,
      closeConsumer: { consumerId: firstConsumerId, requestId: 0 },
    });
    await eventually(() => subscribes === 2, 5000, "the second SUBSCRIBE");

    // m1 and m2 come again from the broker: handing them out now would hand them out twice.
    expect(consumer.queued).toBe(0);
    expect(consumer.tryReceive()).toBeUndefined();
    // Handled while detached: its ack waits for the next subscribe.
    consumer.ack(first);
    await new Promise((resolve) => setImmediate(resolve));
    releaseSecond!();
    await eventually(
      () => connection.received.filter((c) => c.type === CommandType.FLOW).length === 2,
      5000,
      "the second FLOW",
    );
    const afterSecond = connection.received.slice(
      connection.received.findLastIndex((c) => c.type === CommandType.SUBSCRIBE),
    );
    const secondConsumerId = afterSecond[0]!.subscribe!.consumerId;
    expect(afterSecond.map((c) => c.type)).toEqual([
      CommandType.SUBSCRIBE,
      CommandType.ACK,
      CommandType.FLOW,
    ]);
    expect(afterSecond[1]!.ack).toMatchObject({
      consumerId: secondConsumerId,
      messageId: [{ ledgerId: 7n, entryId: 0n }],
    });
    // Nothing was acked on the closed subscribe.
    const beforeClose = connection.received.slice(0, connection.received.indexOf(afterSecond[0]!));
    expect(beforeClose.filter((c) => c.type === CommandType.ACK)).toEqual([]);
  });
});
