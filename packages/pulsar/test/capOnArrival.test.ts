// A message the broker redelivers past a Shared subscription's declared cap (another consumer of the
// subscription asked for a retry at its last attempt, or left with it) is moved to the dead letter on
// arrival and never handed to a handler, as Pulsar's own clients do: the cap holds across every
// consumer of the subscription, whatever process or language runs them.
import { bytes as bytesCodec, type HandlerContext, RustStream } from "@ruststream/core";
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

it("Shared: a message past the cap when it arrives goes to the dead letter without a handler call", async () => {
  client = new PulsarClient({ serviceUrl: serviceUrl() });
  const topic = uniqueName("cap-on-arrival");
  const dlq = `${topic}-shared-DLQ`;
  const other = await client.subscribe({
    topic,
    subscription: "shared",
    subscriptionType: "Shared",
  });
  const producer = await client.createProducer({ topic, batching: false });
  await producer.send({ payload: bytes("poison"), key: "k" });
  // Another consumer of the subscription failed it twice and holds its third delivery.
  other.nack(await other.receive({ timeoutMs: 10_000 }));
  other.nack(await other.receive({ timeoutMs: 10_000 }));
  const held = await other.receive({ timeoutMs: 10_000 });
  expect(held.redeliveryCount).toBe(2);

  const calls: number[] = [];
  const app = new RustStream({ name: "cap-on-arrival", version: "1.0.0" }).broker(
    new PulsarBroker({ url: serviceUrl() }),
    (b) => {
      b.subscriber(new PulsarShared(topic, { subscription: "shared" }), { codec: bytesCodec })
        .maxAttempts(2)
        .deadLetter(dlq)
        .handle((_payload: Uint8Array, ctx: HandlerContext) => {
          calls.push(ctx.attempt);
        });
    },
  );
  t = await TestApp.startLive(app);
  // The other consumer leaves with it: the broker hands it to ours, its attempts already spent.
  await other.close();
  const reader = await client.subscribe({
    topic: dlq,
    subscription: "shared",
    subscriptionType: "Shared",
  });
  const dead = await reader.receive({ timeoutMs: 15_000 });
  reader.ack(dead);
  await t.settle();
  expect(text(dead.payload)).toBe("poison");
  expect(dead.key).toBe("k");
  expect(dead.properties.get("x-ruststream-dlq-reason")).toBe("max-attempts");
  expect(calls).toEqual([]);
  // Reported to the app as a dead letter the broker side moved, for the metrics to count.
  const moved = t.events.flatMap((e) =>
    e.type === "dead-letter" ? [`${e.movedBy} ${e.destination === dlq} ${e.reason}`] : [],
  );
  expect(moved).toEqual(["broker true max-attempts"]);
});
