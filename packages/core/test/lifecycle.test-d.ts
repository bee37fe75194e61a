import { describe, expectTypeOf, it } from "vitest";
import type {
  Broker,
  ClosedBroker,
  ClosedMemoryBroker,
  ConnectedBroker,
  ConnectedMemoryBroker,
  MemoryBroker,
  MemoryDelivery,
  MemoryPublisher,
  Subscription,
} from "../src/index.js";

// Checked by `tsc` (pnpm typecheck) as well as run: each state of the ladder has its own type, and a
// closed broker offers no way to publish or subscribe.
describe("the lifecycle ladder in types", () => {
  it("a configured broker only connects", () => {
    expectTypeOf<MemoryBroker>().toHaveProperty("connect");
    expectTypeOf<MemoryBroker>().not.toHaveProperty("subscribe");
    expectTypeOf<MemoryBroker>().not.toHaveProperty("shutdown");
    expectTypeOf<
      ReturnType<MemoryBroker["connect"]>
    >().resolves.toEqualTypeOf<ConnectedMemoryBroker>();
    expectTypeOf<MemoryBroker>().toMatchTypeOf<Broker<ConnectedMemoryBroker>>();
  });

  it("a connected broker subscribes, pairs publishers and shuts down to a closed witness", () => {
    expectTypeOf<ConnectedMemoryBroker>().toMatchTypeOf<ConnectedBroker>();
    expectTypeOf<ReturnType<ConnectedMemoryBroker["subscribe"]>>().resolves.toMatchTypeOf<
      Subscription<MemoryDelivery>
    >();
    expectTypeOf<
      ReturnType<ReturnType<ConnectedMemoryBroker["defaultPublishPolicy"]>["pair"]>
    >().resolves.toEqualTypeOf<MemoryPublisher>();
    expectTypeOf<
      ReturnType<ConnectedMemoryBroker["shutdown"]>
    >().resolves.toEqualTypeOf<ClosedMemoryBroker>();
  });

  it("a closed broker has no publish or subscribe method", () => {
    expectTypeOf<ClosedMemoryBroker>().toMatchTypeOf<ClosedBroker>();
    expectTypeOf<ClosedBroker>().not.toHaveProperty("subscribe");
    expectTypeOf<ClosedBroker>().not.toHaveProperty("publish");
    expectTypeOf<ClosedMemoryBroker>().not.toHaveProperty("subscribe");
    expectTypeOf<ClosedMemoryBroker>().not.toHaveProperty("publish");
    expectTypeOf<ClosedMemoryBroker>().not.toHaveProperty("defaultPublishPolicy");
    expectTypeOf<ClosedMemoryBroker>().not.toHaveProperty("connect");
    expectTypeOf<ClosedMemoryBroker["state"]>().toEqualTypeOf<"closed">();
  });
});
