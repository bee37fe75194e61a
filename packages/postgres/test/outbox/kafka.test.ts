import { fileURLToPath } from "node:url";
import type { Publisher } from "@ruststream/core";
import { KafkaBroker } from "@ruststream/kafka";
import { killServices, requireEnv, startService, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBroker, PostgresInbox, type PostgresOutbox } from "../../src/index.js";
import { waitUntil } from "../support.js";
import { checkKeyedOrder, commitKeyed, topicReader, unsent } from "./keyedKafka.js";
import { inTransaction } from "./support.js";

// The transactional outbox relaying to the real Kafka (librdkafka, the package's default client):
// a stream of messages over ten keys, a relay process killed with SIGKILL in the middle of it, and a
// second relay finishing the work. The topic then holds every committed message, in order per key,
// none of the rolled-back transactions; copies only of the messages the dead relay had published
// and not yet marked; and an inbox applies each effect once.

const table = "outbox_kafka";
const fixture = fileURLToPath(new URL("./relayProcess.ts", import.meta.url));
const cwd = fileURLToPath(new URL("../..", import.meta.url));

let url: string;
let kafkaBrokers: string;
let sql: pg.Client;
let outbox: PostgresOutbox;
let kafka: Awaited<ReturnType<KafkaBroker["connect"]>>;
let publisher: Publisher<never>;

beforeAll(async () => {
  url = requireEnv("POSTGRES_URL");
  kafkaBrokers = requireEnv("KAFKA_BROKERS");
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
  kafka = await new KafkaBroker({ brokers: kafkaBrokers }).connect();
  publisher = (await kafka.defaultPublishPolicy().pair(kafka)) as Publisher<never>;
});

afterAll(async () => {
  killServices();
  await outbox?.close();
  await kafka?.shutdown();
  await sql?.end();
});

describe("the transactional outbox, relayed to Kafka", () => {
  it("holds every committed message in order per key after a relay killed mid-stream, and the inbox applies each once", async () => {
    const label = uniqueName("kafka");
    const topic = uniqueName("outbox-orders");
    const keys = 10;
    const reader = await topicReader(kafkaBrokers, topic);
    try {
      const committed = await commitKeyed(
        url,
        outbox,
        { label, topic },
        { keys, perKey: 30, rolledBackEvery: 7 },
      );
      // The first relay dies once Kafka confirmed its 100th message, before marking it sent.
      const lines: string[] = [];
      const child = await startService({
        fixture,
        args: [url, table, label, "kafka", kafkaBrokers, "2000", "100"],
        cwd,
        onLine: (line) => lines.push(line),
      });
      expect(await child.exited).toBeNull();
      expect(lines).toHaveLength(1);
      const left = await unsent(sql, table, label);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(committed.length - 100 + keys);

      // A second relay sends the rest, and again what the dead one left leased once its lease ends.
      const relay = await outbox.relay({ targets: { [label]: publisher }, pollMs: 100 });
      try {
        await waitUntil(
          60_000,
          "every row marked sent",
          async () => (await unsent(sql, table, label)) === 0,
        );
      } finally {
        await relay.stop();
      }
      const got = await reader.readAll(committed, 60_000);
      const copies = checkKeyedOrder(got, committed);
      // A copy is a message the dead relay had published and not marked: at most one per key (its
      // claim holds one row per key), the 100th among them.
      expect(copies).toBeGreaterThanOrEqual(1);
      expect(copies).toBeLessThanOrEqual(keys);

      // The consumer records each outbox id in its handler's transaction: one effect per message.
      const inbox = new PostgresInbox(uniqueName("orders"), { table: `${table}_inbox` });
      await inbox.ensureSchema(sql);
      const effects = `"${uniqueName("effects")}"`;
      await sql.query(`CREATE TABLE ${effects} (outbox_id text PRIMARY KEY)`);
      try {
        for (const message of got) {
          await inTransaction(url, async (tx) => {
            if (await inbox.first(tx, message)) {
              await tx.query(`INSERT INTO ${effects} VALUES ($1)`, [message.id]);
            }
          });
        }
        const { rows } = await sql.query(`SELECT count(*)::int AS n FROM ${effects}`);
        expect(rows[0]).toEqual({ n: committed.length });
      } finally {
        await sql.query(`DROP TABLE ${effects}`);
      }
    } finally {
      await reader.close();
    }
    // Two relay processes started, one killed, a topic created and read back: 20 s alone on two
    // loaded cores, past the project's 30 s beside the other files.
  }, 90_000);
});
