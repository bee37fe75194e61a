// The brokers the publish bench knows, each opening its rows against the server its environment
// names (or the one tooling/brokers starts). Each broker's rows are imported when asked for, so a
// Redis run never loads librdkafka's addon.
import { ensureBrokers } from "@ruststream/tooling-testkit";
import type { PublishRow } from "./row.js";

export const brokerNames = [
  "redis",
  "kafka-rdkafka",
  "kafka-kafkajs",
  "pulsar",
  "file",
  "nats",
  "rabbitmq",
  "postgres",
] as const;

async function env(
  name: string,
  broker: "redis" | "kafka" | "pulsar" | "nats" | "rabbitmq" | "postgres",
): Promise<string> {
  if (process.env[name] === undefined) await ensureBrokers([broker]);
  const value = process.env[name];
  if (value === undefined) throw new Error(`no ${broker}: set ${name}, or start tooling/brokers`);
  return value;
}

export async function rowsOf(name: string): Promise<PublishRow[]> {
  switch (name) {
    case "redis":
      return (await import("./redisRows.js")).redisRows(await env("REDIS_URL", "redis"));
    case "kafka-rdkafka":
      return (await import("./kafkaRows.js")).rdkafkaRows(await env("KAFKA_BROKERS", "kafka"));
    case "kafka-kafkajs":
      return (await import("./kafkaRows.js")).kafkajsRows(await env("KAFKA_BROKERS", "kafka"));
    case "pulsar": {
      const url = await env("PULSAR_URL", "pulsar");
      // The admin API checks each row's topic; ensureBrokers exports it beside the URL.
      if (process.env.PULSAR_ADMIN_URL === undefined) await ensureBrokers(["pulsar"]);
      return (await import("./pulsarRows.js")).pulsarRows(url);
    }
    case "file":
      return (await import("./fileRows.js")).fileRows();
    case "nats":
      return (await import("./natsRows.js")).natsRows(await env("NATS_URL", "nats"));
    case "rabbitmq":
      return (await import("./rabbitmqRows.js")).rabbitmqRows(
        await env("RABBITMQ_URL", "rabbitmq"),
      );
    case "postgres":
      return (await import("./postgresRows.js")).postgresRows(
        await env("POSTGRES_URL", "postgres"),
      );
    default:
      throw new Error(`unknown broker "${name}": give a comma list of ${brokerNames.join(", ")}`);
  }
}
