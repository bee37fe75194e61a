import { describe, expect, test } from "vitest";
import { cbor } from "../../src/codec/cbor.js";
import { msgpack } from "../../src/codec/msgpack.js";
import { bytes, json, MemoryBroker, RustStream } from "../../src/index.js";
import { startInProcess } from "./harness.js";

describe.each([
  ["json", json],
  ["msgpack", msgpack],
  ["cbor", cbor],
] as const)("codec %s", (_, codec) => {
  test("round-trips a small object and carries its content type on replies", async () => {
    const value = { id: 1, sku: "a", tags: ["x"], nested: { ok: true } };
    expect(codec.decode(codec.encode(value))).toEqual(value);
    const app = new RustStream({ name: "c", version: "0" }).broker(new MemoryBroker(), (b) => {
      b.subscriber("in", { codec })
        .reply("out")
        .handle((m) => m);
    });
    const h = await startInProcess(app);
    await h.running.publish("in", value, { codec });
    await h.quiet();
    const [reply] = h.published("out");
    expect(codec.decode(reply!.payload)).toEqual(value);
    expect(reply!.headers.getString("content-type")).toBe(codec.contentType);
    await h.running.stop();
  });
});

test("json refuses what it cannot represent; bytes passes payloads through", () => {
  expect(() => json.encode(undefined)).toThrow(/cannot encode/);
  expect(() => json.encode(1n)).toThrow();
  expect(() => json.decode(new Uint8Array([0xff]))).toThrow();
  const payload = new Uint8Array([0, 1, 2]);
  expect(bytes.decode(bytes.encode(payload))).toBe(payload);
});
