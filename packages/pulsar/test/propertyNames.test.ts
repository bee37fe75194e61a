// Header names compare without regard to case and are kept lowercase, as RustStream's HeaderMap
// keeps them, though Pulsar's properties are case-sensitive; the properties Pulsar's own clients
// define for a dead letter keep their case, since the Java client reads them by that exact name.
import { bytes as bytesCodec, type HandlerContext, RustStream, retry } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, it } from "vitest";
import { PulsarBroker, PulsarShared } from "../src/index.js";
import { PulsarClient } from "../src/wire/index.js";
import { serviceUrl } from "./env.js";

let client: PulsarClient | undefined;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await client?.close();
  client = undefined;
});

it("a Java-style property TraceId reads as traceid, and the dead letter writes REAL_TOPIC and ORIGIN_MESSAGE_ID in their own case", async () => {
  client = new PulsarClient({ serviceUrl: serviceUrl() });
  const topic = uniqueName("property-names");
  const dlq = `${topic}-shared-DLQ`;
  const seen: (string | undefined)[] = [];
  const app = new RustStream({ name: "property-names", version: "1.0.0" }).broker(
    new PulsarBroker({ url: serviceUrl() }),
    (b) => {
      b.subscriber(new PulsarShared(topic, { subscription: "shared" }), { codec: bytesCodec })
        .maxAttempts(1)
        .deadLetter(dlq)
        .handle((_payload: Uint8Array, ctx: HandlerContext) => {
          // Either spelling finds it: the names compare without regard to case.
          seen.push(ctx.headers.getString("TraceId"));
          seen.push([...ctx.headers.keys()].find((n) => n.startsWith("trace")));
          return retry();
        });
    },
  );
  t = await TestApp.startLive(app);
  const producer = await client.createProducer({ topic, batching: false });
  await producer.send({ payload: bytes("job"), properties: { TraceId: "t-1" } });
  const reader = await client.subscribe({
    topic: dlq,
    subscription: "shared",
    subscriptionType: "Shared",
  });
  const dead = await reader.receive({ timeoutMs: 15_000 });
  reader.ack(dead);
  await t.settle();
  expect(text(dead.payload)).toBe("job");
  expect(seen).toEqual(["t-1", "traceid"]);
  const names = [...dead.properties.keys()];
  expect(names).toContain("traceid");
  expect(names).not.toContain("TraceId");
  expect(dead.properties.get("REAL_TOPIC")).toBe(`persistent://public/default/${topic}`);
  expect(dead.properties.get("ORIGIN_MESSAGE_ID")).toMatch(/^\d+:\d+:-1(:-?\d+)?$/);
  expect(names).not.toContain("real_topic");
});
