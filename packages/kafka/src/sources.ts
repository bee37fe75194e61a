import {
  type AddressedSource,
  type Bindings,
  type CommitMode,
  RustStreamError,
} from "@ruststream/core";
import { commitModes, sourceMark } from "@ruststream/core/broker";
import { checkedConfig, configEntries } from "./client/connectionOptions.js";
import type { AssignmentStrategy, ConfigValue, StartSpec } from "./client/link.js";

/**
 * Where a group starts on a partition it has no committed offset for: the oldest record kept,
 * the next one written, or the first at or after a time (milliseconds since the epoch). Unset, the
 * client's default applies (the end).
 */
export type StartOffset = StartSpec;

/** How the group spreads partitions over its members (librdkafka's `partition.assignment.strategy`). */
export type Assignment = AssignmentStrategy;

/** Create a missing topic with these settings instead of the cluster's defaults. */
export interface TopicCreation {
  readonly partitions: number;
  /** Default: the cluster's (`default.replication.factor`). */
  readonly replicationFactor?: number;
}

export interface KafkaTopicOptions {
  /**
   * The consumer group. Replicas of a service must share it, so it is never derived from the
   * process: give it here, else the broker's `group` option, else the connecting app's name.
   */
  readonly group?: string;
  /**
   * `auto` (default): the client commits what it handed out; ack and drop are advisory and a
   * requeue is `unsupported`. `tracked`: precise at-least-once, the committed position advances
   * over settled deliveries only. `transactional`: exactly-once processing, the outputs published
   * on behalf of each delivery and the consumed offsets committed in one transaction per commit
   * interval (needs the broker's `transactionalId`).
   */
  readonly commit?: CommitMode;
  /** Where the group starts on a partition it has no committed offset for. */
  readonly start?: StartOffset;
  readonly assignment?: Assignment;
  /**
   * Retry copies go here instead of back to the topic, and the subscription reads this topic too,
   * so a copy waiting out its delay never holds up the main topic's order.
   */
  readonly retryTopic?: string;
  /** Settings for a missing topic this subscription creates; the cluster's defaults otherwise. */
  readonly create?: TopicCreation;
  /** Raw client properties for this subscription's consumer, over the broker's. */
  readonly config?: Readonly<Record<string, ConfigValue>>;
  /** Records fetched ahead of the handlers, per subscription (default 512). */
  readonly prefetch?: number;
}

// Kafka's rule for topic names: up to 249 of these characters, not "." or "..".
const legalTopic = /^[a-zA-Z0-9._-]{1,249}$/;

/** A topic name as given, or the `invalid-argument` error that says what is wrong with it. */
export function topicName(what: string, name: string): string {
  if (typeof name !== "string" || name.length === 0) {
    throw new RustStreamError("invalid-argument", `${what} cannot be empty: give a topic name`);
  }
  if (name.startsWith("^")) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} "${name}" starts with "^", which librdkafka reads as a regular expression over topic names: a KafkaTopic names one topic; drop the "^"`,
    );
  }
  if (!legalTopic.test(name) || name === "." || name === "..") {
    throw new RustStreamError(
      "invalid-argument",
      `${what} "${name}" is not a legal Kafka topic name: use up to 249 letters, digits, ".", "_" and "-"`,
    );
  }
  return name;
}

function checkStart(start: StartOffset | undefined): StartOffset | undefined {
  if (start === undefined || start === "earliest" || start === "latest") return start;
  if (typeof start === "object" && Number.isSafeInteger(start.timestamp) && start.timestamp >= 0) {
    return { timestamp: start.timestamp };
  }
  throw new RustStreamError(
    "invalid-argument",
    `start: ${JSON.stringify(start)}; give "earliest", "latest" or { timestamp: <ms since the epoch> }`,
  );
}

/**
 * One topic read by one consumer group: the group's members share the partitions, and each group
 * gets every record. Retry copies go back to the topic, or to its retry topic.
 */
export class KafkaTopic implements AddressedSource {
  readonly [sourceMark] = "kafka";
  readonly copies = "addressed" as const;
  /** Deliveries report their partition, so keyed lanes can keep each partition's order. */
  readonly partitions = true as const;
  readonly name: string;
  readonly group: string | undefined;
  readonly commit: CommitMode | undefined;
  readonly start: StartOffset | undefined;
  readonly assignment: Assignment | undefined;
  readonly retryTopic: string | undefined;
  readonly create: TopicCreation | undefined;
  readonly prefetch: number;
  /** Raw consumer properties, in the order given (later ones win). */
  readonly properties: ReadonlyArray<readonly [string, ConfigValue]>;

  constructor(topic: string, options: KafkaTopicOptions = {}) {
    this.name = topicName("a Kafka topic", topic);
    if (
      options.group !== undefined &&
      (typeof options.group !== "string" || options.group.length === 0)
    ) {
      throw new RustStreamError("invalid-argument", "group cannot be empty: give the app's name");
    }
    this.group = options.group;
    this.commit = checkCommit(options.commit);
    this.start = checkStart(options.start);
    const assignment = options.assignment;
    if (
      assignment !== undefined &&
      !["range", "roundrobin", "cooperative-sticky"].includes(assignment)
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `assignment: "${String(assignment)}"; give "range", "roundrobin" or "cooperative-sticky"`,
      );
    }
    this.assignment = assignment;
    this.retryTopic =
      options.retryTopic === undefined ? undefined : topicName("retryTopic", options.retryTopic);
    if (this.retryTopic === this.name) {
      throw new RustStreamError(
        "invalid-argument",
        `retryTopic of "${topic}" is the topic itself: copies go back to the topic without it; leave it out`,
      );
    }
    const create = options.create;
    if (create !== undefined) {
      const { partitions, replicationFactor } = create;
      if (!Number.isSafeInteger(partitions) || partitions < 1) {
        throw new RustStreamError(
          "invalid-argument",
          `create.partitions: ${partitions}; give 1 or more`,
        );
      }
      if (
        replicationFactor !== undefined &&
        (!Number.isSafeInteger(replicationFactor) || replicationFactor < 1)
      ) {
        throw new RustStreamError(
          "invalid-argument",
          `create.replicationFactor: ${replicationFactor}; give 1 or more`,
        );
      }
    }
    this.create = create;
    const prefetch = options.prefetch ?? 512;
    if (!Number.isSafeInteger(prefetch) || prefetch < 1) {
      throw new RustStreamError("invalid-argument", `prefetch: ${prefetch}; give 1 or more`);
    }
    this.prefetch = prefetch;
    this.properties = configEntries(`KafkaTopic "${topic}"`, options.config);
  }

  /** A copy reaches the subscription again on the retry topic, or on the topic itself. */
  get redeliveryAddress(): string {
    return this.retryTopic ?? this.name;
  }

  /** Every topic the subscription reads. */
  get topics(): readonly string[] {
    return this.retryTopic === undefined ? [this.name] : [this.name, this.retryTopic];
  }

  get bindings(): Bindings {
    return {
      kafka: {
        topic: this.name,
        ...(this.group === undefined ? {} : { groupId: this.group }),
        ...(this.retryTopic === undefined ? {} : { retryTopic: this.retryTopic }),
        commit: this.commit ?? "auto",
      },
    };
  }

  /**
   * The same descriptor with one more raw property for its consumer: the engine's own name and
   * value (librdkafka's `fetch.min.bytes`, kafkajs's `sessionTimeout`), applied last so it wins.
   */
  config(key: string, value: ConfigValue): KafkaTopic {
    const entry = checkedConfig(`KafkaTopic "${this.name}"`, key, value);
    return this.#with({ config: Object.fromEntries([...this.properties, entry]) });
  }

  /** The same descriptor with the group set: what a bare name becomes. */
  withGroup(group: string): KafkaTopic {
    return this.#with({ group });
  }

  #with(changes: KafkaTopicOptions): KafkaTopic {
    return new KafkaTopic(this.name, {
      ...(this.group === undefined ? {} : { group: this.group }),
      ...(this.commit === undefined ? {} : { commit: this.commit }),
      ...(this.start === undefined ? {} : { start: this.start }),
      ...(this.assignment === undefined ? {} : { assignment: this.assignment }),
      ...(this.retryTopic === undefined ? {} : { retryTopic: this.retryTopic }),
      ...(this.create === undefined ? {} : { create: this.create }),
      prefetch: this.prefetch,
      config: Object.fromEntries(this.properties),
      ...changes,
    });
  }
}

/** Checks a commit mode. */
export function checkCommit(commit: CommitMode | undefined): CommitMode | undefined {
  if (commit === undefined) return undefined;
  if (!commitModes.includes(commit)) {
    throw new RustStreamError(
      "invalid-argument",
      `commit: "${String(commit)}"; give "auto", "tracked" or "transactional"`,
    );
  }
  return commit;
}
