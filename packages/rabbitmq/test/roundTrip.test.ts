import { runtimeTitle } from "@ruststream/core/broker";
import { requireEnv, roundTrip } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { RabbitBroker, RabbitQuorumQueue } from "../src/index.js";

// The round trip every broker runs on each supported runtime (tooling/testkit's roundTrip.ts), on
// the real server through amqplib: the Bun and Deno lines of `npm test` run this file on those
// runtimes.
test(`RabbitMQ through amqplib on ${runtimeTitle()}: three messages handled, a request answered, a clean stop`, () =>
  roundTrip({
    broker: new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true }),
    source: (name) => new RabbitQuorumQueue(name),
    request: true,
  }));
