// The broker side of a scenario, by its broker and mode.
import type { Handled, Published } from "../checker.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { fileTargetOf } from "./fileTargets.js";
import { kafkaTarget } from "./kafkaTarget.js";
import { natsClusterTarget } from "./natsClusterTarget.js";
import { natsCorePublishTarget } from "./natsCorePublishTarget.js";
import { natsCoreTarget } from "./natsCoreTarget.js";
import { natsTarget } from "./natsTarget.js";
import { postgresTarget } from "./postgresTarget.js";
import { pulsarTarget } from "./pulsarTarget.js";
import { rabbitmqQueueTarget } from "./rabbitmqQueueTarget.js";
import { rabbitmqTarget } from "./rabbitmqTarget.js";
import { redisTarget } from "./redisTarget.js";
import type { Scenario } from "./scenario.js";
import type { Target } from "./target.js";

export interface TargetInputs {
  /** The run's stream, topic, subject or queue. */
  readonly key: string;
  readonly seed: number;
  /** The services' group, subscription or consumer name. */
  readonly group: string;
  readonly messages: readonly Published[];
  readonly logFile: string;
  /** What the services handled so far (a file's cut reads it). */
  readonly handled: readonly Handled[];
  /** The truncations the schedule holds. */
  readonly truncations: number;
  readonly proxy: { toxiproxy: Toxiproxy; name: string } | undefined;
  readonly log: (line: string) => void;
}

export function targetOf(scenario: Scenario, inputs: TargetInputs): Promise<Target> {
  const { key, group, proxy, log } = inputs;
  // A scenario that restarts the NATS or PostgreSQL server runs on one of its own, never on the
  // server other tests share.
  const restarts = scenario.faults.includes("broker-restart");
  switch (scenario.broker) {
    case "file":
      return fileTargetOf(
        scenario,
        key,
        inputs.seed,
        inputs.messages,
        inputs.logFile,
        inputs.handled,
        inputs.truncations,
      );
    case "pulsar-shared":
    case "pulsar-key-shared":
      return pulsarTarget(key, group, proxy, log);
    case "kafka-tracked":
    case "kafka-transactional":
      return kafkaTarget(
        key,
        scenario.broker === "kafka-tracked" ? "tracked" : "transactional",
        proxy,
        log,
      );
    case "redis-stream":
    case "redis-list":
      return redisTarget(key, scenario.broker === "redis-list" ? "list" : "stream", proxy, log);
    case "nats-jetstream":
      return natsTarget(key, proxy, restarts, log);
    case "nats-core-request":
      return natsCoreTarget(key, proxy, inputs.handled, log);
    case "nats-core-publish":
    case "nats-core-fanout":
      return natsCorePublishTarget(
        key,
        scenario.replicas,
        scenario.broker === "nats-core-fanout",
        proxy,
        inputs.handled,
        log,
      );
    case "nats-partitioned":
      return natsClusterTarget(key, group, log);
    case "rabbitmq-quorum":
      return rabbitmqTarget(
        key,
        proxy,
        // Leader kills need the three-node cluster; every other scenario runs on the one node.
        scenario.faults.includes("leader-kill"),
        log,
      );
    case "rabbitmq-classic":
    case "rabbitmq-stream":
      return rabbitmqQueueTarget(key, scenario.broker, proxy, log);
    case "postgres-queue":
      return postgresTarget(
        key,
        proxy,
        { restartable: restarts, transactional: scenario.transactional === true },
        log,
      );
  }
}
