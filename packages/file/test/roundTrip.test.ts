import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtimeTitle } from "@ruststream/core/broker";
import { roundTrip } from "@ruststream/tooling-testkit";
import { afterAll, test } from "vitest";
import { FileBroker } from "../src/index.js";

// The round trip every broker runs on each supported runtime (tooling/testkit's roundTrip.ts): the
// Bun and Deno lines of `npm test` run this file on those runtimes.
const dir = mkdtempSync(join(tmpdir(), "rs-roundtrip-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test(`a stream file on ${runtimeTitle()}: three messages handled, a request answered, a clean stop`, () =>
  roundTrip({
    broker: new FileBroker({ path: join(dir, "orders.ss"), consumer: "roundtrip" }),
    request: true,
  }));
