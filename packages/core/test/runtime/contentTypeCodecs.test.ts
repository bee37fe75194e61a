import { describe, expect, test } from "vitest";
import { z } from "zod";
import { cbor } from "../../src/codec/cbor.js";
import { msgpack } from "../../src/codec/msgpack.js";
import {
  type Codec,
  type DecodeFailureEvent,
  json,
  jsonCodec,
  MemoryBroker,
  RustStream,
  RustStreamError,
  readDeadLetterOrigin,
} from "../../src/index.js";
import { type Harness, startInProcess } from "./harness.js";

// A subscriber's `codecs`: a delivery whose content-type names one of them is decoded by it; one
// without a content-type, or with the codec's own, by `codec`; one naming none of them is a decode
// failure, settled by the decode policy as any other.

function decodeFailures(h: Harness): DecodeFailureEvent[] {
  return h.events.filter((e): e is DecodeFailureEvent => e.type === "decode-failure");
}

function codecsApp(seen: unknown[], options: { deadLetter?: boolean } = {}) {
  return new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
    const subscriber = b.subscriber("orders", { codecs: [msgpack] });
    if (options.deadLetter === true) subscriber.deadLetter("orders-dlq");
    subscriber.handle((message) => {
      seen.push(message);
    });
  });
}

describe("a subscriber's codecs", () => {
  test("decode what json and msgpack publishers sent, each by its content-type", async () => {
    const seen: unknown[] = [];
    const h = await startInProcess(codecsApp(seen));
    await h.running.publish("orders", { id: 1, via: "json" });
    await h.running.publish("orders", { id: 2, via: "msgpack" }, { codec: msgpack });
    await h.quiet();
    expect(h.published("orders").map((m) => m.headers.getString("content-type"))).toEqual([
      "application/json",
      "application/msgpack",
    ]);
    expect(seen).toEqual([
      { id: 1, via: "json" },
      { id: 2, via: "msgpack" },
    ]);
    expect(decodeFailures(h)).toEqual([]);
    await h.running.stop();
  });

  test("a content type is matched without its parameters and case", async () => {
    const seen: unknown[] = [];
    const h = await startInProcess(codecsApp(seen));
    await h.publishRaw("orders", msgpack.encode({ id: 3 }), {
      "content-type": "Application/MsgPack; v=1",
    });
    await h.publishRaw("orders", '{"id":4}', { "content-type": "application/JSON; charset=utf-8" });
    expect(seen).toEqual([{ id: 3 }, { id: 4 }]);
    await h.running.stop();
  });

  test("a delivery without a content-type is decoded by the subscriber's codec", async () => {
    const seen: unknown[] = [];
    const h = await startInProcess(codecsApp(seen));
    await h.publishRaw("orders", '{"id":5}');
    expect(seen).toEqual([{ id: 5 }]);
    // Not by msgpack, to which these bytes are not { id: 5 } (`{` is the fixint 123).
    await h.running.stop();
  });

  test("a content type none of them decodes is undecodable, naming the type and the option, and dead-lettered as it arrived", async () => {
    const seen: unknown[] = [];
    const h = await startInProcess(codecsApp(seen, { deadLetter: true }));
    const payload = cbor.encode({ id: 6 });
    await h.publishRaw("orders", payload, { "content-type": "application/cbor" });
    expect(seen).toEqual([]);
    const [failure] = decodeFailures(h);
    expect(failure?.error).toBeInstanceOf(RustStreamError);
    expect((failure?.error as Error).message).toBe(
      'the message on "orders" has the content-type application/cbor, which neither the subscriber\'s codec (application/json) nor its codecs (application/msgpack) decode: give its codec in subscriber(source, { codecs })',
    );
    const dead = h.published("orders-dlq");
    expect(dead).toHaveLength(1);
    expect(dead[0]!.payload).toEqual(payload);
    expect(dead[0]!.headers.getString("content-type")).toBe("application/cbor");
    expect(readDeadLetterOrigin(dead[0]!.headers)?.reason).toBe("decode");
    await h.running.stop();
  });

  test("without codecs the content-type is not read: the codec decodes every delivery", async () => {
    const seen: unknown[] = [];
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders").handle((m) => {
        seen.push(m);
      });
    });
    const h = await startInProcess(app);
    await h.publishRaw("orders", '{"id":7}', { "content-type": "application/msgpack" });
    expect(seen).toEqual([{ id: 7 }]);
    await h.running.stop();
  });

  test("the schema validates what any of them decoded", async () => {
    const seen: unknown[] = [];
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders", {
        schema: z.object({ id: z.number() }),
        codecs: [msgpack],
      }).handle((order) => {
        seen.push(order.id);
      });
    });
    const h = await startInProcess(app);
    await h.running.publish("orders", { id: 8 }, { codec: msgpack });
    await h.running.publish("orders", { id: "nine" }, { codec: msgpack });
    await h.quiet();
    expect(seen).toEqual([8]);
    expect((decodeFailures(h)[0]?.error as Error).message).toMatch(
      /does not match the subscriber's schema/,
    );
    await h.running.stop();
  });

  test("a batch handler's messages are decoded each by its own content-type", async () => {
    const batches: unknown[][] = [];
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders", { codecs: [msgpack, cbor] })
        .batch(10)
        .handle((messages) => {
          batches.push([...messages]);
        });
    });
    const h = await startInProcess(app);
    await h.running.publish("orders", { id: 10 }, { codec: cbor });
    await h.running.publish("orders", { id: 11 }, { codec: msgpack });
    await h.running.publish("orders", { id: 12 });
    await h.quiet();
    expect(batches.flat()).toEqual([{ id: 10 }, { id: 11 }, { id: 12 }]);
    await h.running.stop();
  });

  test("are described beside the codec's content type", () => {
    const app = new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("orders", { codecs: [msgpack, cbor] }).handle(() => {});
      b.subscriber("plain").handle(() => {});
    });
    const [broker] = app.describe().brokers;
    expect(broker?.subscribers.map((s) => s.message)).toEqual([
      {
        contentType: "application/json",
        otherContentTypes: ["application/msgpack", "application/cbor"],
      },
      { contentType: "application/json" },
    ]);
  });

  test.each([
    [
      "one of the codec's own type",
      [jsonCodec({ maxDepth: 10 })],
      "subscriber({ codecs }): one of codecs decodes application/json, the type of the subscriber's codec, which decodes those: leave it out of codecs, or give it as codec",
    ],
    [
      "two of one type",
      [msgpack, { ...msgpack, contentType: "application/MSGPACK" }],
      "subscriber({ codecs }): two of codecs decode application/msgpack: give one codec a content type",
    ],
    [
      "what is not a codec",
      [msgpack, "cbor" as unknown as Codec<unknown>],
      "subscriber({ codecs }): each of codecs is a codec (its contentType, encode and decode), not cbor",
    ],
  ])("refuse %s when the subscriber is declared", (_, codecs, message) => {
    const declare = () =>
      new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
        b.subscriber("orders", { codecs }).handle(() => {});
      });
    expect(declare).toThrow(new RustStreamError("invalid-argument", message));
  });

  test("type the codecs by the message: each decodes what the codec does", () => {
    const order: Codec<{ id: number }> = {
      contentType: "application/x-order",
      encode: (value) => json.encode(value),
      decode: (payload) => json.decode(payload) as { id: number },
    };
    new RustStream({ name: "t", version: "0" }).broker(new MemoryBroker(), (b) => {
      // @ts-expect-error: msgpack decodes unknown, not the { id } the codec promises.
      b.subscriber("orders", { codec: order, codecs: [msgpack] });
    });
  });
});
