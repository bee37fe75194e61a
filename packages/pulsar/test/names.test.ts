import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { PulsarClient } from "../src/wire/client.js";
import { parseServiceUrl } from "../src/wire/serviceUrl.js";
import { parseTopicName, partitionTopicName } from "../src/wire/topicName.js";

describe("topic names", () => {
  it("expands the short forms", () => {
    expect(parseTopicName("my-topic").full).toBe("persistent://public/default/my-topic");
    expect(parseTopicName("t1/ns1/orders").full).toBe("persistent://t1/ns1/orders");
    expect(parseTopicName("non-persistent://t/n/x").domain).toBe("non-persistent");
  });

  it("recognises a partition and its base topic", () => {
    const name = parseTopicName("orders-partition-3");
    expect(name.partition).toBe(3);
    expect(name.base).toBe("persistent://public/default/orders");
    expect(partitionTopicName("orders", 2)).toBe("persistent://public/default/orders-partition-2");
    expect(parseTopicName("orders-partition-x").partition).toBe(-1);
  });

  it.each([
    "",
    "a/b",
    "a/b/c/d",
    "http://public/default/x",
    "persistent://public/default/",
    "persistent://x",
    "has space",
    "persistent://public//x",
    "tópico",
  ])("refuses %j with invalid-argument", (name) => {
    let thrown: unknown;
    try {
      parseTopicName(name);
    } catch (error) {
      thrown = error;
    }
    expect(isRustStreamError(thrown, "invalid-argument")).toBe(true);
  });
});

describe("service URLs", () => {
  it("reads hosts, ports and TLS", () => {
    expect(parseServiceUrl("pulsar://a:1,b")).toMatchObject([
      { host: "a", port: 1, tls: false },
      { host: "b", port: 6650, tls: false },
    ]);
    expect(parseServiceUrl("pulsar+ssl://h")[0]).toMatchObject({ tls: true, port: 6651 });
    expect(parseServiceUrl("pulsar://[::1]:7000")[0]).toMatchObject({ host: "::1", port: 7000 });
    expect(() => parseServiceUrl("http://x")).toThrow(/service URL/);
  });

  it("refuses TLS settings beside an address that is not pulsar+ssl://, and a misnamed setting", () => {
    const ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
    expect(() => new PulsarClient({ serviceUrl: "pulsar://h:6650", tls: { ca } })).toThrow(
      /pulsar:\/\/h:6650 is not a TLS address: give pulsar\+ssl:\/\/host:6651/,
    );
    expect(
      () =>
        new PulsarClient({
          serviceUrl: "pulsar+ssl://h",
          tls: { ca, rejectUnauthorized: false } as never,
        }),
    ).toThrow(/tls\.rejectUnauthorized .* give verify: false/);
  });
});
