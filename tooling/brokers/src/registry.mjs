// @ts-check
// The brokers this tool knows, by name. Each module exports the same shape:
//
//   name: string
//   up(log) -> Promise<{ already: boolean, address: string, ms: number }>
//       idempotent: a running broker answers { already: true } at once; refuses with a clear error
//       when something that is not its broker holds its port; on a failed start, throws an Error
//       whose message carries the tail of the broker's log.
//   down(log) -> Promise<boolean>   stops only what `up` started (pid files); true if it stopped something
//   status() -> Promise<{ running: boolean, address: string, pid?: number, rssMiB?: number }[]>
//   env() -> Record<string, string>  the variables tests read to reach it (REDIS_URL, KAFKA_BROKERS, ...)
import * as kafka from "./kafka.mjs";
import * as kafkaCluster from "./kafkaCluster.mjs";
import * as nats from "./nats.mjs";
import * as natsCluster from "./natsCluster.mjs";
import * as postgres from "./postgres.mjs";
import * as pulsar from "./pulsar.mjs";
import * as rabbitmq from "./rabbitmq.mjs";
import * as rabbitmqCluster from "./rabbitmqCluster.mjs";
import * as redis from "./redis.mjs";
import * as redisCluster from "./redisCluster.mjs";
import * as redisSentinel from "./redisSentinel.mjs";

export const brokers = {
  redis,
  kafka,
  pulsar,
  rabbitmq,
  nats,
  postgres,
  "kafka-cluster": kafkaCluster,
  "redis-cluster": redisCluster,
  "redis-sentinel": redisSentinel,
  "nats-cluster": natsCluster,
  "rabbitmq-cluster": rabbitmqCluster,
};

/** Started only when named: each is several processes, run for the tests that need them. */
const onDemand = /** @type {const} */ ([
  "kafka-cluster",
  "redis-cluster",
  "redis-sentinel",
  "nats-cluster",
  "rabbitmq-cluster",
]);

/** @typedef {keyof typeof brokers} BrokerName */

/**
 * "all" (or no name) means the brokers every test run needs; the clusters (three Kafka JVMs, six
 * Redis nodes, a Sentinel set) run only when named (their tests start them), except that `down all`
 * and `status all` include them.
 * @param {string[]} names
 * @param {{ withCluster?: boolean }} [options] withCluster: "all" includes the on-demand ones
 * @returns {BrokerName[]}
 */
export function parseNames(names, options = {}) {
  if (names.length === 0 || names.includes("all")) {
    return options.withCluster
      ? ["redis", "kafka", "pulsar", "rabbitmq", "nats", "postgres", ...onDemand]
      : ["redis", "kafka", "pulsar", "rabbitmq", "nats", "postgres"];
  }
  for (const name of names) {
    if (!(name in brokers)) {
      throw new Error(
        `unknown broker "${name}": choose from ${Object.keys(brokers).join(", ")}, all`,
      );
    }
  }
  return /** @type {BrokerName[]} */ (names);
}
