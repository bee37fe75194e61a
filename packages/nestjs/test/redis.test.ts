import { RedisBroker } from "@ruststream/redis";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe } from "vitest";
import { documentedServiceTests, type Setup } from "./ordersScenario.js";

// The same service on the real Redis server: a stream per pattern, read by the consumer group
// named after the service. Nest's own Redis transport rides Pub/Sub, with no group and no replay.
function setup(): Setup {
  const url = requireEnv("REDIS_URL");
  return {
    topics: {
      created: uniqueName("nest-created"),
      sum: uniqueName("nest-sum"),
      track: uniqueName("nest-track"),
      lost: uniqueName("nest-lost"),
      declined: uniqueName("nest-declined"),
      deadLetters: uniqueName("nest-dlq"),
    },
    server: new RedisBroker({ url }),
    client: new RedisBroker({ url }),
  };
}

describe("a Nest microservice on Redis streams", () => {
  documentedServiceTests(setup, "strategy");
});

describe("the same handlers on RustStreamModule, on Redis streams", () => {
  documentedServiceTests(setup, "module");
});
