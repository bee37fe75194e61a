import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileBroker } from "@ruststream/file";
import { afterAll, describe } from "vitest";
import { documentedServiceTests, type Setup } from "./ordersScenario.js";

// The file broker needs no server: the service and its client share one stream file, each test a
// file of its own.
const dir = mkdtempSync(join(tmpdir(), "rs-nestjs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;

function setup(): Setup {
  const path = join(dir, `orders-${++files}.ss`);
  return {
    topics: {
      created: "order_created",
      sum: "sum",
      track: "track",
      lost: "lost",
      declined: "order_declined",
      deadLetters: "orders-dlq",
    },
    server: new FileBroker({ path, consumer: "orders-service" }),
    client: new FileBroker({ path }),
  };
}

describe("a Nest microservice on the file broker", () => {
  documentedServiceTests(setup, "strategy");
});

describe("the same handlers on RustStreamModule, on the file broker", () => {
  documentedServiceTests(setup, "module");
});
