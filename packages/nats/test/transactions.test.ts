import { isRustStreamError } from "@ruststream/core";
import { bytes, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type JetStreamPublisher, JetStreamSubject, NatsPublish } from "../src/index.js";
import { rawClient } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A transaction is one atomic batch (NATS 2.12): on the real server, a batch the stream refuses
// leaves nothing behind, and what the server cannot take is refused saying why.

const made = madeInEachTest();

async function setUp(atomicPublish: boolean) {
  const connected = made.connection(await liveBroker().connect());
  const subject = uniqueName("atomic");
  made.streams.push(subject);
  await (
    await connected.subscribe(
      new JetStreamSubject(subject, {
        stream: subject,
        declare: { subjects: [subject], storage: "memory", atomicPublish },
      }),
    )
  ).close();
  const publisher = (await new NatsPublish({ jetStream: true }).pair(
    connected,
  )) as JetStreamPublisher;
  return { subject, publisher };
}

async function storedMessages(stream: string): Promise<number> {
  const nc = await rawClient();
  try {
    const { jetstreamManager } = await import("@nats-io/jetstream");
    return (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
}

async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("the transaction did not fail");
}

describe("transactions as atomic batches, on the real server", () => {
  it("a batch the stream refuses stores none of it", async () => {
    const { subject, publisher } = await setUp(true);
    const error = await failure(
      publisher.transaction(async (tx) => {
        // The stream is empty: an expected last sequence of 5 fails the whole batch.
        await tx.publish({
          name: subject,
          payload: bytes("1"),
          options: { expect: { lastSequence: 5 } },
        });
        await tx.publish({ name: subject, payload: bytes("2") });
        await tx.publish({ name: subject, payload: bytes("3") });
      }),
    );
    expect(isRustStreamError(error, "publish-refused"), String(error)).toBe(true);
    expect(await storedMessages(subject)).toBe(0);
    await publisher.transaction(async (tx) => {
      for (const p of ["a", "b", "c"]) await tx.publish({ name: subject, payload: bytes(p) });
    });
    expect(await storedMessages(subject)).toBe(3);
  });

  it("a stream that takes no atomic batches refuses a transaction, saying how to allow them", async () => {
    const { subject, publisher } = await setUp(false);
    const error = await failure(
      publisher.transaction(async (tx) => {
        await tx.publish({ name: subject, payload: bytes("1") });
        await tx.publish({ name: subject, payload: bytes("2") });
      }),
    );
    expect(isRustStreamError(error, "unsupported"), String(error)).toBe(true);
    expect(String(error)).toMatch(/atomicPublish/);
    expect(await storedMessages(subject)).toBe(0);
  });

  it("more messages than the server takes in one batch are refused before any is sent", async () => {
    const { subject, publisher } = await setUp(true);
    const error = await failure(
      publisher.transaction(async (tx) => {
        for (let i = 0; i <= 1000; i++)
          await tx.publish({ name: subject, payload: bytes(String(i)) });
      }),
    );
    expect(isRustStreamError(error, "publish-refused"), String(error)).toBe(true);
    expect(await storedMessages(subject)).toBe(0);
  });
});
