import type { Publisher } from "@ruststream/core";
import { KafkaBroker } from "@ruststream/kafka";
import { uniqueName } from "@ruststream/tooling-testkit";
import { brokers, requireEnv } from "@ruststream/tooling-testkit/brokers";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { PostgresBroker } from "../../src/index.js";
import { waitUntil } from "../support.js";
import {
  checkKeyedOrder,
  commitKeyed,
  type Keyed,
  type Received,
  topicReader,
  unsent,
} from "./keyedKafka.js";
import { warnings } from "./support.js";

// The outbox relaying to Kafka while Kafka is stopped and started again: the shared broker, so this
// runs in the restarts group (vitest.restart.config.ts), holding Kafka alone (exclusive). A
// controlled shutdown, as the metrics package's outage test does: after a SIGKILL, Kafka recovers
// every partition's log before it serves, and the shared broker's data from the whole suite's
// topics took longer than its start budget (120 s) to recover on 2 cores. Messages are committed before, during and after the outage; the relay goes on by
// itself. The topic then holds every committed message, in order per key, none of a rolled-back
// transaction, and copies only of messages whose publish was in doubt.

const table = "outbox_kafka_restart";
const keys = 10;

describe("the outbox relaying to Kafka, Kafka stopped and restarted", () => {
  it("puts every committed message on the topic, in order per key, and goes on by itself", () =>
    brokers.kafka.exclusive(async () => {
      const url = requireEnv("POSTGRES_URL");
      const kafkaBrokers = requireEnv("KAFKA_BROKERS");
      const label = uniqueName("kafka");
      const topic = uniqueName("outbox-restart");
      const sql = new pg.Client({ connectionString: url });
      await sql.connect();
      const outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
      const kafka = await new KafkaBroker({ brokers: kafkaBrokers }).connect();
      // Each publish the relay saw fail: a message it may have put on the topic and sends again.
      const { logger, entries } = warnings();
      const failedPublishes = () =>
        entries.filter((e) => e.message === "outbox relay: publish failed").length;
      try {
        const publisher = (await kafka.defaultPublishPolicy().pair(kafka)) as Publisher<never>;
        const relay = await outbox.relay({
          targets: { [label]: publisher },
          pollMs: 100,
          leaseMs: 5000,
          maxAttempts: 1000,
          backoff: { firstMs: 200, maxMs: 2000 },
          logger,
        });
        const committed: Keyed[] = [];
        const commit = async (from: number, perKey: number) => {
          committed.push(
            ...(await commitKeyed(
              url,
              outbox,
              { label, topic },
              { keys, perKey, rolledBackEvery: 5, from },
            )),
          );
        };
        try {
          await commit(0, 20);
          await waitUntil(
            60_000,
            "the first messages relayed",
            async () => (await unsent(sql, table, label)) < 100,
          );
          // Stopped with the relay at work; more is committed while Kafka is away.
          await brokers.kafka.restart({ whileDown: () => commit(20, 20) });
          await commit(40, 20);
          await waitUntil(
            180_000,
            "every row marked sent",
            async () => (await unsent(sql, table, label)) === 0,
          );
        } finally {
          await relay.stop();
        }
        // Read once every row is marked sent, in a group of its own from the first offset: what the
        // topic holds, whatever a consumer would have made of the restart.
        const reader = await topicReader(kafkaBrokers, topic);
        let got: Received[];
        try {
          got = await reader.readAll(committed, 60_000);
        } finally {
          await reader.close();
        }
        const copies = checkKeyedOrder(got, committed);
        // A copy comes from a publish in doubt: one the relay saw fail and sent again, or one
        // librdkafka sent again itself at the stop (at most one per key: a key has one in flight).
        expect(copies).toBeLessThanOrEqual(failedPublishes() + keys);
      } finally {
        await kafka.shutdown();
        await outbox.close();
        await sql.end();
      }
    }));
});
