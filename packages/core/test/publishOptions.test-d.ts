import { describe, expectTypeOf, it } from "vitest";
import type {
  Broker,
  ClosedBroker,
  ConnectedBroker,
  Delivery,
  MemoryBroker,
  MemoryTopic,
  Publisher,
  PublishOptionsOf,
  PublishPolicy,
  Subscription,
} from "../src/index.js";
import { RustStream, reply } from "../src/index.js";

// A broker's per-message publish settings flow, by type, to the handlers mounted on it: replies and
// `ctx.out` publishes may carry exactly what its publisher takes, and nothing on a broker with none.

interface PartitionOptions {
  readonly partition: number;
}
interface PartitionedPublisher extends Publisher<PartitionOptions> {}
interface ConnectedPartitioned
  extends ConnectedBroker<MemoryTopic, Delivery, PartitionedPublisher> {
  source(name: string): MemoryTopic;
  subscribe(source: string | MemoryTopic): Promise<Subscription<Delivery>>;
  defaultPublishPolicy(): PublishPolicy<this, PartitionedPublisher>;
  shutdown(): Promise<ClosedBroker>;
}
type PartitionedBroker = Broker<ConnectedPartitioned>;

describe("publish options by broker", () => {
  it("are read off the broker's default publisher", () => {
    expectTypeOf<PublishOptionsOf<MemoryBroker>>().toEqualTypeOf<never>();
    expectTypeOf<PublishOptionsOf<PartitionedBroker>>().toEqualTypeOf<PartitionOptions>();
  });

  it("type replies and ctx.out publishes of a handler", () => {
    const partitioned = {} as PartitionedBroker;
    new RustStream({ name: "t", version: "0" }).broker(partitioned, (b) => {
      b.subscriber("orders")
        .reply<{ ok: boolean }>("receipts")
        .publishes({ audit: "audit" })
        .handle(async (_m, ctx) => {
          await ctx.out.audit.publish({}, { options: { partition: 2 } });
          // @ts-expect-error: not this broker's options
          await ctx.out.audit.publish({}, { options: { partition: "2" } });
          return reply({ ok: true }, { options: { partition: 1 } });
        });
    });
  });

  it("refuse options on a broker that has none", () => {
    const memory = {} as MemoryBroker;
    new RustStream({ name: "t", version: "0" }).broker(memory, (b) => {
      b.subscriber("orders")
        .reply<{ ok: boolean }>("receipts")
        .publishes({ audit: "audit" })
        .handle(async (_m, ctx) => {
          // @ts-expect-error: the memory broker takes no per-message options
          await ctx.out.audit.publish({}, { options: { partition: 2 } });
          await ctx.out.audit.publish({}, { partitionKey: "k" });
          return reply({ ok: true }, { partitionKey: "k" });
        });
      b.subscriber("more")
        .reply<{ ok: boolean }>("receipts")
        // @ts-expect-error: nor does a reply on it
        .handle(() => reply({ ok: true }, { options: { partition: 1 } }));
    });
  });

  it("type a running app's publisher of a broker", async () => {
    const running = await new RustStream({ name: "t", version: "0" }).start();
    const payload = new Uint8Array();
    const partitioned = running.publisher({} as PartitionedBroker);
    expectTypeOf(partitioned).toEqualTypeOf<Publisher<PartitionOptions>>();
    await partitioned.publish({ name: "orders", payload, options: { partition: 2 } });
    // @ts-expect-error: not this broker's options
    await partitioned.publish({ name: "orders", payload, options: { partition: "2" } });
    const memory = running.publisher({} as MemoryBroker);
    // @ts-expect-error: the memory broker takes no per-message options
    await memory.publish({ name: "orders", payload, options: { partition: 2 } });
    await memory.publish({ name: "orders", payload, partitionKey: "k" });
  });

  it("still type the reply's value", () => {
    const memory = {} as MemoryBroker;
    new RustStream({ name: "t", version: "0" }).broker(memory, (b) => {
      b.subscriber("orders")
        .reply<{ ok: boolean }>("receipts")
        // @ts-expect-error: the reply's value is not a receipt
        .handle(() => reply({ ok: "yes" }, { partitionKey: "k" }));
    });
  });
});
