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
import * as pulsar from "./pulsar.mjs";
import * as redis from "./redis.mjs";

export const brokers = { redis, kafka, pulsar, "kafka-cluster": kafkaCluster };

/** @typedef {keyof typeof brokers} BrokerName */

/**
 * "all" (or no name) means the brokers every test run needs; the three-node Kafka cluster costs
 * three JVMs, so it runs only when named (its test starts it), except that `down all` stops it too.
 * @param {string[]} names
 * @param {{ withCluster?: boolean }} [options] withCluster: "all" includes kafka-cluster
 * @returns {BrokerName[]}
 */
export function parseNames(names, options = {}) {
  if (names.length === 0 || names.includes("all")) {
    return options.withCluster
      ? ["redis", "kafka", "pulsar", "kafka-cluster"]
      : ["redis", "kafka", "pulsar"];
  }
  for (const name of names) {
    if (!(name in brokers)) {
      throw new Error(
        `unknown broker "${name}": choose from redis, kafka, pulsar, kafka-cluster, all`,
      );
    }
  }
  return /** @type {BrokerName[]} */ (names);
}
