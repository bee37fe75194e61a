import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { bytes, json, RustStream } from "@ruststream/core";
import { cbor } from "@ruststream/core/cbor";
import { msgpack } from "@ruststream/core/msgpack";
import { TestApp } from "@ruststream/testing";
import { text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  type KvDelivery,
  KvWatch,
  kvSubject,
  NatsBroker,
  NatsKv,
} from "../src/index.js";
import { eventually, rawClient } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A KV watch whose subscriber is given `{ codec: bytes, codecs: [json, msgpack] }` decodes each
// entry by the content-type its put wrote, as KvBucket.get does: JSON and msgpack puts by theirs,
// a put without a content-type (the KV clients write none) as its bytes. A content type none of
// them decodes is a decode failure naming the type and the option. In-process and on the server.

const made = madeInEachTest();

/** Each value the watch decoded, as `key=value` (bytes as their text, in quotes). */
function valuesApp(broker: NatsBroker, bucket: string, seen: string[]) {
  return new RustStream({ name: "values", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<unknown>(
      new KvWatch(bucket, { start: "all", declare: { history: 5, storage: "memory" } }),
      { codec: bytes, codecs: [json, msgpack] },
    )
      .name("values")
      .handle((value, ctx) => {
        seen.push(`${(ctx.delivery as KvDelivery).key}=${shown(value)}`);
      });
  });
}

function shown(value: unknown): string {
  return value instanceof Uint8Array ? `"${text(value)}"` : JSON.stringify(value);
}

const refusal =
  'the message on "c" has the content-type application/cbor, which neither the subscriber\'s codec (application/octet-stream) nor its codecs (application/json, application/msgpack) decode: give its codec in subscriber(source, { codecs })';

describe("a KV watch with codecs", () => {
  it("in-process: each entry decoded by its content-type, an unknown one refused", async () => {
    const bucket = uniqueName("values").replaceAll(".", "_");
    const seen: string[] = [];
    const t = made.app(
      await TestApp.start(
        valuesApp(new NatsBroker({ servers: "nats://in-process.invalid:4222" }), bucket, seen),
      ),
    );
    await t.publish(kvSubject(bucket, "j"), { via: "json" });
    await t.publish(kvSubject(bucket, "m"), { via: "msgpack" }, { codec: msgpack });
    await t.publishRaw(kvSubject(bucket, "raw"), "plain");
    await t.publish(kvSubject(bucket, "c"), { via: "cbor" }, { codec: cbor });
    expect(seen).toEqual(['j={"via":"json"}', 'm={"via":"msgpack"}', 'raw="plain"']);
    const probe = t.subscriber("values");
    expect(probe.decodeFailures.map((e) => (e as Error).message)).toEqual([refusal]);
  });

  it("on the real server: puts of two content types and a KV client's decoded each as KvBucket.get reads them", async () => {
    const bucket = uniqueName("values").replaceAll(".", "_");
    made.streams.push(`KV_${bucket}`);
    const seen: string[] = [];
    const t = made.app(
      await TestApp.startLive(valuesApp(liveBroker(), bucket, seen), { withinMs: 20_000 }),
    );
    const kv = await new NatsKv(bucket, { codecs: [msgpack] }).pair(
      t.running.connection() as ConnectedNatsBroker,
    );
    await kv.put("j", { via: "json" });
    await kv.put("m", { via: "msgpack" }, { codec: msgpack });
    const nc = await rawClient();
    try {
      await (await new Kvm(jetstream(nc)).open(bucket)).put("raw", "plain");
    } finally {
      await nc.close();
    }
    await kv.put("c", { via: "cbor" }, { codec: cbor });
    // Every entry settled, the refused one too: the count decides, not a quiet spell. (A probe
    // is what the subscriber did when it was taken.)
    const app = t;
    await eventually(
      () => app.subscriber("values").outcomes.length === 4,
      10_000,
      "four entries settled",
    );
    const probe = t.subscriber("values");
    expect(seen).toEqual(['j={"via":"json"}', 'm={"via":"msgpack"}', 'raw="plain"']);
    expect(probe.decodeFailures.map((e) => (e as Error).message)).toEqual([refusal]);
    // The bucket's own reads decode the same entries to the same values.
    const read = async (key: string) => {
      const entry = await kv.get(key);
      return `${key}=${entry?.operation === "put" ? shown(entry.value) : "none"}`;
    };
    expect([await read("j"), await read("m"), await read("raw")]).toEqual(seen);
  });
});
