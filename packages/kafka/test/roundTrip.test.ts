import { isRustStreamError } from "@ruststream/core";
import { runtimeName, runtimeTitle } from "@ruststream/core/broker";
import { expectedRuntime, requireEnv, roundTrip } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { KafkaBroker, KafkaTopic } from "../src/index.js";

// The round trip every broker runs on each supported runtime (tooling/testkit's roundTrip.ts), on
// the real server: the Bun and Deno lines of `npm test` run this file on those runtimes. kafkajs
// (plain JavaScript) runs everywhere; librdkafka's addon is built for Node's ABI, so on Bun and
// Deno the engine is refused at connect with the fix (README, "Runtimes").
const brokers = requireEnv("KAFKA_BROKERS");
const onNode = expectedRuntime() === "node";
// Each topic made by its subscription, so its partition is assigned at subscribe rather than after a
// metadata refresh finds a topic the first publish created; and a group per topic. Two subscribers
// of one group rebalance it as the second joins, and on Deno kafkajs's consumer once crashed inside
// its offset manager in that rebalance (a committed-offsets entry of a topic gone: README, "Not done
// yet"); test/groups.test.ts holds the shared group on Node.
const source = (name: string) => new KafkaTopic(name, { group: name, create: { partitions: 1 } });

test(`kafkajs on ${runtimeTitle()}: three messages handled, a request answered, a clean stop`, () =>
  roundTrip({
    broker: new KafkaBroker({ brokers, engine: "kafkajs" }),
    source,
    request: true,
  }));

test(`librdkafka on ${runtimeTitle()}: ${onNode ? "three messages handled, a request answered, a clean stop" : "refused at connect, naming kafkajs"}`, async () => {
  const broker = new KafkaBroker({ brokers, engine: "librdkafka" });
  if (onNode) return roundTrip({ broker, source, request: true });
  expect(runtimeName()).toBe(expectedRuntime());
  const refused = await broker.connect().catch((error: unknown) => error);
  expect(isRustStreamError(refused, "unsupported")).toBe(true);
  expect((refused as Error).message).toMatch(
    new RegExp(`does not run on ${runtimeTitle()}.*engine: "kafkajs"`),
  );
});
