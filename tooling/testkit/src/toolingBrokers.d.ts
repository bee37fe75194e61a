// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): what the tests
// use of it, typed here once. src/brokers.ts re-exports it, and every test imports it from there.
declare module "@ruststream/tooling-brokers" {
  /** A broker tooling/brokers runs (`all`: every one but `kafka-cluster`). */
  export type BrokerName = "redis" | "kafka" | "pulsar" | "kafka-cluster" | "all";

  /** The variables a global setup's `ensureBrokers` exports to the test workers. */
  export type BrokerVariable =
    | "REDIS_URL"
    | "REDIS_PERSISTENT_URL"
    | "REDIS_PASSWORD_URL"
    | "REDIS_ACL_URL"
    | "REDIS_TLS_URL"
    | "REDIS_TLS_CA"
    | "KAFKA_BROKERS"
    | "KAFKA_SASL_BROKERS"
    | "KAFKA_SASL_USERNAME"
    | "KAFKA_SASL_PASSWORD"
    | "KAFKA_LIBS"
    | "KAFKA_JAVA"
    | "PULSAR_URL"
    | "PULSAR_ADMIN_URL"
    | "PULSAR_TOKEN_URL"
    | "PULSAR_TOKEN"
    | "PULSAR_TOKEN_KEY"
    | "PULSAR_TLS_URL"
    | "PULSAR_TLS_CA"
    | "PULSAR_LIBS";

  /** Starts the named brokers (idempotently) and exports their variables into process.env. */
  export function ensureBrokers(
    names: readonly BrokerName[],
    log?: (line: string) => void,
  ): Promise<void>;

  /** The variable's value; throws naming the broker that exports it and how to start it. */
  export function requireEnv(name: BrokerVariable): string;

  type RedisInstance = "plain" | "persistent" | "protected" | "tls";

  export const brokers: {
    readonly redis: {
      /** Stops the instance (SIGKILL with hard, as a crash would) and starts it again. */
      restart(instance: RedisInstance, options?: { hard?: boolean }): Promise<void>;
      /** Runs `work` with the instance to itself, for a test that restarts it. */
      exclusive<T>(instance: RedisInstance, work: () => Promise<T>): Promise<T>;
    };
    readonly kafka: {
      /** Stops Kafka (SIGKILL with hard, as a crash would) and starts it again on the same data. */
      restart(options?: { hard?: boolean }): Promise<void>;
      /** Creates or updates a SCRAM user (SHA-256 and SHA-512) on the running broker. */
      addScramUserSync(username: string, password: string): void;
      /** Runs `work` with Kafka to itself, for a test that restarts it. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    /** Three KRaft nodes (ids 1-3), started only by the test that needs them. */
    readonly "kafka-cluster": {
      up(log: (line: string) => void): Promise<{ already: boolean; address: string; ms: number }>;
      down(log: (line: string) => void): Promise<boolean>;
      /** The bootstrap list of all three nodes. */
      bootstrap(): string;
      /** SIGKILLs node `id`, as a crash would. */
      killNode(id: number): Promise<void>;
      /** Starts node `id` again on its data; resolves once all three serve and see each other. */
      startNode(id: number): Promise<void>;
      /** Runs `work` with the cluster to itself, for a test that kills its nodes. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
      /**
       * Each partition's leader (-1: none), replicas and ISR, once `isr` are in sync and node
       * `without` leads none and is in no ISR, or as they were at the timeout.
       */
      describeTopic(
        topic: string,
        options?: { isr?: number; without?: number; timeoutMs?: number },
      ): Promise<Array<{ partition: number; leader: number; replicas: number[]; isr: number[] }>>;
      /** Each partition's end offset and the group's committed one (-1: none), once they meet or at the timeout. */
      committedOffsets(
        group: string,
        topic: string,
        options?: { timeoutMs?: number },
      ): Promise<Array<{ partition: number; end: number; committed: number }>>;
    };
  };
}
