import { describe, expect, it } from "vitest";
import { consumerConfig, readerConfig } from "../src/client/librdkafka/config.js";
import type { ConfigValue } from "../src/client/link.js";

// The librdkafka engine's consumer properties: the fetch back-off chosen by measuring is the
// default, and a raw entry (the broker's, then the descriptor's) still overrides it.

type Entries = ReadonlyArray<readonly [string, ConfigValue]>;

function connection(config: Entries = []) {
  return {
    brokers: ["127.0.0.1:19092"],
    engine: "librdkafka" as const,
    clientId: "c",
    sasl: undefined,
    tls: undefined,
    config,
  };
}

function consumer(broker: Entries = [], descriptor: Entries = []) {
  return consumerConfig(connection(broker), {
    group: "g",
    topics: ["t"],
    commit: "auto",
    start: undefined,
    assignment: undefined,
    config: descriptor,
  });
}

describe("librdkafka consumer properties", () => {
  it("fetch again after 100 ms, not librdkafka's 1000, once the local queue is full", () => {
    expect(consumer()["fetch.queue.backoff.ms"]).toBe(100);
    expect(readerConfig(connection(), "reader")["fetch.queue.backoff.ms"]).toBe(100);
  });

  it("keep a raw entry's back-off: the broker's, and the descriptor's over it", () => {
    expect(consumer([["fetch.queue.backoff.ms", 1000]])["fetch.queue.backoff.ms"]).toBe(1000);
    expect(
      readerConfig(connection([["fetch.queue.backoff.ms", 5]]), "r")["fetch.queue.backoff.ms"],
    ).toBe(5);
    expect(
      consumer([["fetch.queue.backoff.ms", 1000]], [["fetch.queue.backoff.ms", 20]])[
        "fetch.queue.backoff.ms"
      ],
    ).toBe(20);
  });
});
