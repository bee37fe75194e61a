import { MemoryBroker, MemoryTopic, RustStream, silentLogger } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { PostgresBroker, PostgresQueue } from "@ruststream/postgres";
import { PulsarBroker, PulsarShared } from "@ruststream/pulsar";
import { RabbitBroker, RabbitQueue } from "@ruststream/rabbitmq";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { expect, test } from "vitest";
import { asyncapiDocument, asyncapiJson, asyncapiViewerHtml, asyncapiYaml } from "../src/index.js";
import { validated } from "./validated.js";

// Distinct words, so finding one anywhere in the output can only mean it leaked.
const secrets = {
  redisUser: "redisuserzq",
  redisPassword: "redispasswordzq",
  kafkaUser: "kafkauserzq",
  kafkaPassword: "kafkapasswordzq",
  pulsarToken: "pulsartokenzq",
  rabbitUser: "rabbituserzq",
  rabbitPassword: "rabbitpasswordzq",
  postgresUser: "pguserzq",
  postgresPassword: "pgpasswordzq",
  memoryUser: "memuserzq",
  memoryPassword: "mempasswordzq",
};

function serviceWithCredentials(): RustStream {
  const app = new RustStream({ name: "billing", version: "1.0.0" });
  app.broker(
    new RedisBroker({
      url: `redis://${secrets.redisUser}:${secrets.redisPassword}@redis.internal:6379/0?password=${secrets.redisPassword}#${secrets.redisPassword}`,
    }),
    (b) => {
      b.subscriber(new RedisStream("invoices", { group: "billing" })).handle(() => {});
    },
  );
  app.broker(
    new KafkaBroker({
      brokers: ["kafka.internal:9093"],
      sasl: {
        mechanism: "scram-sha-512",
        username: secrets.kafkaUser,
        password: secrets.kafkaPassword,
      },
      tls: true,
    }),
    (b) => {
      b.subscriber(new KafkaTopic("payments", { group: "billing" })).handle(() => {});
    },
  );
  app.broker(
    new PulsarBroker({ url: "pulsar+ssl://pulsar.internal:6651", token: secrets.pulsarToken }),
    (b) => {
      b.subscriber(new PulsarShared("refunds", { subscription: "billing" })).handle(() => {});
    },
  );
  app.broker(
    new RabbitBroker({
      url: `amqps://${secrets.rabbitUser}:${secrets.rabbitPassword}@rabbit.internal:5671/billing?heartbeat=${secrets.rabbitPassword}`,
    }),
    (b) => {
      b.subscriber(new RabbitQueue("charges")).handle(() => {});
    },
  );
  app.broker(
    new PostgresBroker({
      url: `postgres://${secrets.postgresUser}:${secrets.postgresPassword}@db.internal:5432/billing?password=${secrets.postgresPassword}&sslmode=require`,
    }),
    (b) => {
      b.subscriber(new PostgresQueue("ledger-entries")).handle(() => {});
    },
  );
  app.broker(
    new MemoryBroker({
      url: `memory://${secrets.memoryUser}:${secrets.memoryPassword}@local.internal:1`,
    }),
    (b) => {
      b.subscriber(new MemoryTopic("ledger", { group: "billing" })).handle(() => {});
    },
  );
  return app;
}

test("brokers configured with credentials: the document holds none of them", async () => {
  const doc = asyncapiDocument(serviceWithCredentials(), { logger: silentLogger });
  const outputs = {
    json: asyncapiJson(doc),
    yaml: asyncapiYaml(doc),
    viewer: asyncapiViewerHtml(doc),
  };
  for (const [format, text] of Object.entries(outputs)) {
    for (const [what, secret] of Object.entries(secrets)) {
      expect(text.includes(secret), `${what} in the ${format} output`).toBe(false);
    }
  }
  await validated(outputs.json);
  // The servers are still there, by host.
  expect(doc.servers).toEqual({
    redis: { host: "redis.internal:6379", protocol: "redis" },
    kafka: {
      host: "kafka.internal:9093",
      protocol: "kafka-secure",
      description: "Kafka cluster (SASL SCRAM-SHA-512 over TLS)",
    },
    pulsar: { host: "pulsar.internal:6651", protocol: "pulsar+ssl" },
    rabbitmq: { host: "rabbit.internal:5671", protocol: "amqps" },
    postgres: { host: "db.internal:5432", protocol: "postgres" },
    memory: {
      host: "local.internal:1",
      protocol: "memory",
      description: "in-process memory broker",
    },
  });
});
