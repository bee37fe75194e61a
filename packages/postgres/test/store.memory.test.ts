import { ManualClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { describe } from "vitest";
import { MemoryServer } from "../src/inProcess/memoryServer.js";
import { MemoryStore } from "../src/inProcess/memoryStore.js";
import { storeContract } from "./store.js";

describe("the in-process stand-in's store", () => {
  const server = new MemoryServer();
  const clock = new ManualClock();
  server.attach(clock, new CountingCoordinator());
  storeContract({
    store: () => new MemoryStore(server),
    pass: async (ms) => clock.advance(ms),
  });
});
