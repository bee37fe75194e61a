import { describe, expect, test } from "vitest";
import {
  json,
  MemoryBroker,
  MemoryTopic,
  out,
  RustStream,
  type StandardSchemaV1,
  supportsDescribeServer,
} from "../../src/index.js";

// app.describe() reads the app without connecting: what a documentation generator and a health
// endpoint are given. Standard Schema validators that offer JSON Schema (zod 4.2+, arktype 2.1.28+)
// describe the message's shape; here a hand-made one stands in for them.

const Order: StandardSchemaV1<{ id: number }> & {
  "~standard": { jsonSchema: { input: (o: { target: string }) => object } };
} = {
  "~standard": {
    version: 1,
    vendor: "hand-made",
    validate: (value) => ({ value: value as { id: number } }),
    jsonSchema: {
      input: ({ target }) => ({
        $schema: target,
        type: "object",
        properties: { id: { type: "integer" } },
        required: ["id"],
      }),
    },
  },
};

const secret = "s3cret-never-shown";

function app() {
  return new RustStream({ name: "orders", version: "1.2.3" }).broker(
    new MemoryBroker({ url: `memory://svc:${secret}@orders.local:1` }),
    (b) => {
      b.subscriber(new MemoryTopic("orders", { group: "billing" }), { schema: Order })
        .reply("receipts")
        .publishes({ audit: out("audit-log", { codec: json }) })
        .workers(4, { key: "partitionKey" })
        .maxAttempts(5)
        .deadLetter("orders-dlq")
        .handle(() => ({ ok: true }));
      b.subscriber("pings")
        .name("ping-handler")
        .reply()
        .handle(() => ({ pong: true }));
      b.subscriber("bulk")
        .batch(16)
        .handle(() => {});
    },
  );
}

describe("app.describe()", () => {
  test("brokers, their servers, and each subscriber's source, message, replies and settings", () => {
    const description = app().describe();
    expect(description).toEqual({
      name: "orders",
      version: "1.2.3",
      brokers: [
        {
          kind: "memory",
          server: {
            protocol: "memory",
            description: "in-process memory broker",
            host: "orders.local:1",
          },
          subscribers: [
            {
              name: "orders",
              source: {
                name: "orders",
                kind: "memory",
                copies: "addressed",
                bindings: { memory: { group: "billing" } },
              },
              message: {
                contentType: "application/json",
                schema: {
                  vendor: "hand-made",
                  jsonSchema: {
                    $schema: "draft-2020-12",
                    type: "object",
                    properties: { id: { type: "integer" } },
                    required: ["id"],
                  },
                },
              },
              reply: { name: "receipts", contentType: "application/json" },
              publishes: { audit: { name: "audit-log", contentType: "application/json" } },
              deadLetter: "orders-dlq",
              maxAttempts: 5,
              workers: 4,
              key: "partitionKey",
              batch: undefined,
              prefetch: 256,
              failure: {
                error: "retry",
                decode: "dead-letter",
                backoff: { initialMs: 100, maxMs: 10_000 },
              },
            },
            {
              name: "ping-handler",
              source: { name: "pings", kind: undefined, copies: undefined, bindings: undefined },
              message: { contentType: "application/json" },
              reply: { name: undefined, contentType: "application/json" },
              publishes: {},
              deadLetter: undefined,
              maxAttempts: 3,
              workers: 1,
              key: undefined,
              batch: undefined,
              prefetch: 256,
              failure: {
                error: "retry",
                decode: "drop",
                backoff: { initialMs: 100, maxMs: 10_000 },
              },
            },
            {
              name: "bulk",
              source: { name: "bulk", kind: undefined, copies: undefined, bindings: undefined },
              message: { contentType: "application/json" },
              reply: undefined,
              publishes: {},
              deadLetter: undefined,
              maxAttempts: 3,
              workers: 1,
              key: undefined,
              batch: 16,
              prefetch: 16,
              failure: {
                error: "retry",
                decode: "drop",
                backoff: { initialMs: 100, maxMs: 10_000 },
              },
            },
          ],
        },
      ],
    });
  });

  test("never connects, and never shows a credential", () => {
    const made = app();
    const before = process.getActiveResourcesInfo().length;
    const text = JSON.stringify(made.describe());
    expect(text).not.toContain(secret);
    expect(text).not.toContain("svc:");
    expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(before);
  });

  test("a broker describes its server before it connects, as after", async () => {
    const broker = new MemoryBroker({ url: `memory://svc:${secret}@orders.local:1` });
    expect(supportsDescribeServer(broker)).toBe(true);
    if (!supportsDescribeServer(broker)) throw new Error("unreachable");
    const before = broker.describeServer();
    const connected = await broker.connect();
    expect(connected.describeServer()).toEqual(before);
    expect(JSON.stringify(before)).not.toContain(secret);
    await connected.shutdown();
  });

  test("a schema whose validator cannot give JSON Schema is described by its vendor", () => {
    const throwing: StandardSchemaV1 & {
      "~standard": { jsonSchema: { input: () => never } };
    } = {
      "~standard": {
        version: 1,
        vendor: "refined",
        validate: (value) => ({ value }),
        jsonSchema: {
          input: () => {
            throw new Error("a refinement has no JSON Schema");
          },
        },
      },
    };
    const described = new RustStream({ name: "a", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("x", { schema: throwing }).handle(() => {});
      })
      .describe();
    expect(described.brokers[0]?.subscribers[0]?.message).toEqual({
      contentType: "application/json",
      schema: { vendor: "refined" },
    });
  });
});
