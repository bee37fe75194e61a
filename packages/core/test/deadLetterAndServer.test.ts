import { describe, expect, it } from "vitest";
import { hostFromUrl, withoutSecrets, writeDeadLetterOrigin } from "../src/brokerEntry.js";
import { HeaderMap, readDeadLetterOrigin } from "../src/index.js";

describe("dead-letter origin", () => {
  it("round-trips under core's names and under a broker's own", () => {
    const origin = {
      source: "orders",
      partition: 3,
      position: "18446744073709551615",
      reason: "x",
    };
    const headers = writeDeadLetterOrigin(new HeaderMap(), origin);
    expect(headers.getString("x-ruststream-dlq-source")).toBe("orders");
    expect(readDeadLetterOrigin(headers)).toEqual(origin);
    const kafka = {
      source: "kafka-dlq-source-topic",
      partition: "kafka-dlq-source-partition",
      position: "kafka-dlq-source-offset",
      reason: "x-dead-letter-reason",
    };
    const onKafka = writeDeadLetterOrigin(new HeaderMap(), origin, kafka);
    expect(onKafka.getString("kafka-dlq-source-offset")).toBe("18446744073709551615");
    expect(readDeadLetterOrigin(onKafka, kafka)).toEqual(origin);
    expect(readDeadLetterOrigin(new HeaderMap())).toBeUndefined();
  });
});

describe("credentials", () => {
  it("hostFromUrl keeps only host and port", () => {
    expect(hostFromUrl("redis://user:pw@cache.local:6380/0?password=pw")).toBe("cache.local:6380");
  });

  it("withoutSecrets drops secret-named keys and the userinfo of URLs, deeply", () => {
    const options = {
      url: "kafka://alice:hunter2@broker:9092",
      password: "hunter2",
      sasl: { mechanism: "plain", username: "alice", password: "hunter2" },
      brokers: ["amqp://bob:hunter2@a:5672/vhost", "b:9092"],
      clientId: "orders",
    };
    const clean = withoutSecrets(options);
    expect(JSON.stringify(clean)).not.toContain("hunter2");
    expect(clean).toEqual({
      url: "kafka://broker:9092",
      brokers: ["amqp://a:5672/vhost", "b:9092"],
      clientId: "orders",
    });
  });
});
