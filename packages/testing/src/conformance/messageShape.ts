import { HeaderMap, headerNames, isRustStreamError, type Publisher } from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { has } from "./capabilities.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { ackAll, Collector, throughSentinel } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

/**
 * The header sets each of which must arrive byte for byte; those marked refusable may instead be
 * refused at publish (a wire whose header values are text cannot carry arbitrary bytes), but a
 * broker that cannot carry plain text headers, the framework's own among them, is no broker for it.
 */
function headerCases(): Array<[string, HeaderMap, "refusable" | "required"]> {
  const many = new HeaderMap();
  for (let i = 0; i < 24; i++) many.set(`x-entry-${i}`, `value-${i}`);
  return [
    ["24 entries", many, "required"],
    ["an empty value", new HeaderMap({ "x-empty": "" }), "refusable"],
    [
      "binary bytes with NUL, CR, LF and invalid UTF-8",
      new HeaderMap({ "x-binary": new Uint8Array([0, 13, 10, 0xff, 0xfe, 65, 0]) }),
      "refusable",
    ],
    [
      "the framework's own headers",
      new HeaderMap()
        .set(headerNames.retryCount, "2")
        .set(headerNames.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        .set(headerNames.tracestate, "congo=t61rcWkgMzE")
        .set(headerNames.correlationId, "c-1")
        .set(headerNames.contentType, "application/json"),
      "required",
    ],
  ];
}

async function roundTrip(
  h: Harness,
  publisher: Publisher<never>,
  collector: Collector,
  name: string,
  label: string,
  headers: HeaderMap,
  refusal: "refusable" | "required",
): Promise<void> {
  const seen = collector.items.length;
  try {
    await publisher.publish({ name, payload: bytes(label), headers });
  } catch (error) {
    if (refusal === "required" || !isRustStreamError(error, "publish-refused")) throw error;
    // Refused up front is an honest answer, as long as nothing half-sent arrives: a sentinel
    // published behind it arrives alone.
    const through = await throughSentinel(publisher, collector, name, h.arrivalMs, label);
    expect(through.slice(seen), `${label}: refused, yet delivered`).toEqual(["sentinel"]);
    await ackAll(collector.items.slice(seen));
    return;
  }
  const got = await collector.waitFor(seen + 1, h.arrivalMs, label);
  const d = got[seen]!;
  expect(text(d.payload)).toBe(label);
  for (const [key, value] of headers) {
    expect(d.headers.get(key), `${label}: header "${key}"`).toEqual(value);
  }
  await ackAll([d]);
}

export const messageShapeScenarios: readonly Scenario<Harness>[] = [
  {
    name: "32 messages published at once all arrive",
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("burst");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        const sent = [...Array(32).keys()].map((i) => `b${i}`);
        await Promise.all(sent.map((p) => publisher.publish({ name, payload: bytes(p) })));
        const got = await collector.waitFor(32, h.arrivalMs, "32 messages");
        expect(got.map((d) => text(d.payload)).sort()).toEqual([...sent].sort());
        await ackAll(got);
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "duplicates");
        expect(seen.length, "no duplicates before the sentinel").toBe(33);
        await ackAll(collector.items);
        await collector.quiet(33, h.silenceMs, "no duplicates");
        await collector.stop();
      }),
  },
  {
    name: "headers arrive byte for byte or are refused at publish, never rewritten",
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("shape");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        for (const [label, headers, refusal] of headerCases()) {
          await roundTrip(h, publisher, collector, name, label, headers, refusal);
        }
        await collector.stop();
      }),
  },
  {
    // Both ways: keyed lanes rest on the key a delivery reports, so a broker that declares none
    // must report none rather than something it did not carry.
    name: "a delivery reports the partition key it was published with exactly when partitionKey is declared, an unkeyed one none",
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("key");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("keyed"), partitionKey: "k-1" });
        await publisher.publish({ name, payload: bytes("unkeyed") });
        const got = await collector.waitFor(2, h.arrivalMs, "a keyed and an unkeyed message");
        // By payload: a keyed and an unkeyed message may take different partitions.
        const keyed = got.find((d) => text(d.payload) === "keyed");
        const unkeyed = got.find((d) => text(d.payload) === "unkeyed");
        if (keyed === undefined || unkeyed === undefined) {
          throw new Error(`expected "keyed" and "unkeyed", got ${got.map((d) => text(d.payload))}`);
        }
        const declared = has(h.capabilities, "partitionKey");
        expect(keyed.partitionKey, "the keyed message's partition key").toEqual(
          declared ? bytes("k-1") : undefined,
        );
        expect(unkeyed.partitionKey, "the unkeyed message's partition key").toBeUndefined();
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "keyed messages report their key and keep their order per key (3 keys x 8)",
    needs: ["partitionKey"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("keyed");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        const keys = ["k-a", "k-b", "k-c"];
        for (let i = 0; i < 8; i++) {
          for (const key of keys) {
            await publisher.publish({ name, payload: bytes(`${key}:${i}`), partitionKey: key });
          }
        }
        const got = await collector.waitFor(24, h.arrivalMs, "24 keyed messages");
        for (const key of keys) {
          const mine = got.filter((d) => text(d.payload).startsWith(`${key}:`));
          expect(mine.map((d) => text(d.payload))).toEqual(
            [...Array(8).keys()].map((i) => `${key}:${i}`),
          );
          for (const d of mine) {
            expect(d.partitionKey, `${text(d.payload)}: partition key`).toEqual(bytes(key));
          }
        }
        await ackAll(got);
        await collector.stop();
      }),
  },
];

/** Registers the message shape suite: volume, header round trips, partition keys and keyed order. */
export function messageShape<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite(
    "message shape",
    messageShapeScenarios,
    h,
    h.capabilities,
    h.arrivalMs * 6 + h.silenceMs * 6,
  );
}
