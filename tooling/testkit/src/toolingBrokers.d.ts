// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): what the tests
// use of it, typed here once. src/brokers.ts re-exports it, and every test imports it from there.
declare module "@ruststream/tooling-brokers" {
  /** A broker tooling/brokers runs (`all`: every one but the clusters and the Sentinel set). */
  export type BrokerName =
    | "redis"
    | "kafka"
    | "pulsar"
    | "postgres"
    | "rabbitmq"
    | "nats"
    | "kafka-cluster"
    | "redis-cluster"
    | "redis-sentinel"
    | "nats-cluster"
    | "rabbitmq-cluster"
    | "all";

  /** The variables a global setup's `ensureBrokers` exports to the test workers. */
  export type BrokerVariable =
    | "REDIS_URL"
    | "REDIS_PERSISTENT_URL"
    | "REDIS_PASSWORD_URL"
    | "REDIS_ACL_URL"
    | "REDIS_TLS_URL"
    | "REDIS_TLS_CA"
    | "REDIS_CLUSTER_NODES"
    | "REDIS_CLUSTER_PASSWORD"
    | "REDIS_CLUSTER_ACL_USER"
    | "REDIS_CLUSTER_ACL_PASSWORD"
    | "REDIS_SENTINELS"
    | "REDIS_SENTINEL_NAME"
    | "REDIS_SENTINEL_PASSWORD"
    | "REDIS_SENTINEL_ACL_USER"
    | "REDIS_SENTINEL_ACL_PASSWORD"
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
    | "PULSAR_LIBS"
    | "POSTGRES_URL"
    | "RABBITMQ_URL"
    | "RABBITMQ_TLS_URL"
    | "RABBITMQ_TLS_CA"
    | "RABBITMQ_MANAGEMENT_URL"
    | "RABBITMQ_USERNAME"
    | "RABBITMQ_PASSWORD"
    | "NATS_URL"
    | "NATS_MONITOR_URL"
    | "NATS_AUTH_URL"
    | "NATS_USER"
    | "NATS_PASSWORD"
    | "NATS_NKEY_SEED"
    | "NATS_TOKEN_URL"
    | "NATS_TOKEN"
    | "NATS_TLS_URL"
    | "NATS_TLS_CA"
    | "NATS_JWT_URL"
    | "NATS_WS_URL"
    | "NATS_WSS_URL"
    | "NATS_CREDS"
    | "NATS_JWT_ACCOUNT_SEED"
    | "NATS_CLUSTER_SERVERS"
    | "RABBITMQ_CLUSTER_URLS"
    | "RABBITMQ_CLUSTER_MANAGEMENT_URLS";

  /** Starts the named brokers (idempotently) and exports their variables into process.env. */
  export function ensureBrokers(
    names: readonly BrokerName[],
    log?: (line: string) => void,
  ): Promise<void>;

  /**
   * Drops, in this process, kafkajs 2.2.4's harmless `TimeoutNegativeWarning` (its request queue's
   * negative timer) and no other warning. Idempotent.
   */
  export function dropKafkajsNegativeTimeoutWarning(): void;

  /**
   * The nats-server binary tooling/brokers builds once per machine (built now if missing), for a
   * test that runs a server of its own on its own port (one it stops).
   */
  export function ensureNatsServer(log: (line: string) => void): Promise<string>;

  /** The variable's value; throws naming the broker that exports it and how to start it. */
  export function requireEnv(name: BrokerVariable): string;

  /** Paths: the CA's certificate (what a client trusts) and key, the server's certificate and key. */
  export interface TestCertificates {
    readonly ca: string;
    readonly caKey: string;
    readonly cert: string;
    readonly key: string;
  }

  /**
   * The test brokers' TLS material in `dir` (an existing folder), made with openssl unless it is
   * there: a CA named `caName` and a server certificate it signed for 127.0.0.1 and localhost.
   */
  export function ensureTestCertificates(dir: string, caName: string): Promise<TestCertificates>;

  type RedisInstance = "plain" | "persistent" | "protected" | "tls";

  /** What `up` answers: whether it already ran, where, and how long the start took. */
  interface Started {
    readonly already: boolean;
    readonly address: string;
    readonly ms: number;
  }

  export const brokers: {
    readonly redis: {
      /** Stops the instance (SIGKILL with hard, as a crash would) and starts it again. */
      restart(instance: RedisInstance, options?: { hard?: boolean }): Promise<void>;
      /** Runs `work` with the instance to itself, for a test that restarts it. */
      exclusive<T>(instance: RedisInstance, work: () => Promise<T>): Promise<T>;
    };
    readonly kafka: {
      /**
       * Stops Kafka (SIGKILL with hard, as a crash would) and starts it again on the same data;
       * `whileDown` runs in between (it starts again even when that throws).
       */
      restart(options?: { hard?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
      /** Creates or updates a SCRAM user (SHA-256 and SHA-512) on the running broker. */
      addScramUserSync(username: string, password: string): void;
      /** Runs `work` with Kafka to itself, for a test that restarts it. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    readonly pulsar: {
      /**
       * Stops the standalone (SIGKILL with hard, as a crash would) and starts it again on its data:
       * topics, backlogs and subscription cursors survive. `whileDown` runs in between (it starts
       * again even when that throws).
       */
      restart(options?: { hard?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
      /** Runs `work` with the standalone to itself, for a test that restarts it. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    readonly postgres: {
      /**
       * A cluster of its own on its own port (POSTGRES_RESTART_PORT, 15433), for a test that
       * restarts a server: the shared one (POSTGRES_URL) is never stopped. The test starts it and
       * stops it inside `exclusive`.
       */
      readonly restartable: {
        /** Starts it (idempotently); resolves with its URL. */
        up(log?: (line: string) => void): Promise<string>;
        /** Stops it when it runs. */
        down(): Promise<boolean>;
        /**
         * Stops it (with hard, the postmaster and its backends SIGKILLed at once, as a crash
         * would) and starts it again on its data; `whileDown` runs in between.
         */
        restart(options?: { hard?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
        /** Runs `work` with the cluster to itself, for a test that restarts it. */
        exclusive<T>(work: () => Promise<T>): Promise<T>;
      };
    };
    readonly rabbitmq: {
      /**
       * Stops the node (SIGKILL of its process group with hard, as a crash would) and starts it
       * again on its data; `whileDown` runs in between (it starts again even when that throws).
       */
      restart(options?: { hard?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
      /** Runs `work` with the node to itself, for a test that restarts it. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
      /**
       * The management API's JSON answer for `path` (e.g. `/api/queues/%2F/orders`), as the user;
       * undefined for an empty answer (a PUT that created, a DELETE).
       */
      management(path: string, init?: RequestInit): Promise<unknown>;
      /**
       * A client certificate the node's CA signed for `commonName` (paths of the certificate and
       * its key), made unless it is there: with it a client logs in on the TLS listener by the
       * EXTERNAL mechanism as the user of that name (the node reads the common name), which the
       * caller makes.
       */
      clientCertificate(commonName: string): Promise<{ cert: string; key: string }>;
    };
    readonly nats: {
      /**
       * Stops the plain server (JetStream, file storage; SIGKILL with hard, as a crash would) and
       * starts it again on its data; `whileDown` runs in between (it starts again even when that
       * throws).
       */
      restart(options?: { hard?: boolean; whileDown?: () => Promise<void> }): Promise<void>;
      /** Runs `work` with the plain server to itself, for a test that restarts it. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    /** Three KRaft nodes (ids 1-3), started only by the test that needs them. */
    readonly "kafka-cluster": {
      up(log: (line: string) => void): Promise<{ already: boolean; address: string; ms: number }>;
      down(log: (line: string) => void): Promise<boolean>;
      /** The bootstrap list of all three nodes. */
      bootstrap(): string;
      /**
       * Per node, where a fault proxy in front of it listens (the address the node advertises to
       * clients that bootstrap through the proxy) and where it forwards to.
       */
      proxyRoutes(): Array<{ id: number; listen: string; upstream: string }>;
      /** The bootstrap list through the fault proxy (see proxyRoutes). */
      proxiedBootstrap(): string;
      /** SIGKILLs node `id`, as a crash would. */
      killNode(id: number): Promise<void>;
      /** Starts node `id` again on its data; resolves once all three serve and see each other. */
      startNode(id: number): Promise<void>;
      /** SIGKILLs all three nodes and starts them again on their data; resolves once all serve. */
      restartAll(): Promise<void>;
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
    /** Six nodes (1-3 start as masters, 4-6 as their replicas), started by the cluster tests. */
    readonly "redis-cluster": {
      up(log: (line: string) => void): Promise<Started>;
      down(log: (line: string) => void): Promise<boolean>;
      env(): Record<string, string>;
      /** SIGKILLs node `i`, as a crash would. */
      killNode(i: number): Promise<void>;
      /** Waits until every slot is served without node `i`; answers how long that took (ms). */
      waitServedWithout(i: number, options?: { timeoutMs?: number }): Promise<number>;
      /** Starts node `i` again on its nodes.conf; resolves once the cluster is whole. */
      startNode(i: number): Promise<void>;
      /** The masters now: node index, id, slot ranges. */
      masters(): Promise<Array<{ node: number; id: string; slots: Array<[number, number]> }>>;
      /** The slot of `key`, as the cluster computes it. */
      slotOf(key: string): Promise<number>;
      /** The node index of the master serving `key`. */
      masterOf(key: string): Promise<number>;
      /**
       * Moves `slot` with its keys to master `to`; answers the node it came from. `beforeAssign`
       * runs once the keys are on the target and before the slot is assigned to it (the source
       * answers ASK for them meanwhile).
       */
      migrateSlot(
        slot: number,
        to: number,
        options?: { beforeAssign?: () => Promise<void> },
      ): Promise<number>;
      /** Runs `work` with the cluster to itself, for a test that changes its topology. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    /** Three JetStream nodes (1-3), started by the NATS cluster tests. */
    readonly "nats-cluster": {
      up(log: (line: string) => void): Promise<Started>;
      down(log: (line: string) => void): Promise<boolean>;
      env(): Record<string, string>;
      /** The three client addresses, comma-separated. */
      bootstrap(): string;
      /** The node (1-3) a server name (a stream's leader, as JetStream reports it) names. */
      nodeOf(server: string): number;
      /** The node (1-3) leading JetStream's meta group (creations), or `undefined` while none does. */
      metaLeader(): Promise<number | undefined>;
      /** SIGKILLs node `i`, as a crash would. */
      killNode(i: number): Promise<void>;
      /** Starts node `i` again on its data; resolves once all three serve as one cluster. */
      startNode(i: number): Promise<void>;
      /** Runs `work` with the cluster to itself, for a test that kills its nodes. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    /** Three RabbitMQ nodes (1-3) in one cluster, started by the RabbitMQ cluster tests. */
    readonly "rabbitmq-cluster": {
      up(log: (line: string) => void): Promise<Started>;
      down(log: (line: string) => void): Promise<boolean>;
      env(): Record<string, string>;
      /** The three AMQP URLs (the user and password in them), one per node. */
      urls(): string[];
      /** Node `i`'s management API's JSON answer for `path`, as the user. */
      management(i: number, path: string, init?: RequestInit): Promise<unknown>;
      /** The node (1-3) an Erlang node name (a quorum queue's leader, as the API gives it) names. */
      nodeOf(erlangName: string): number;
      /** SIGKILLs node `i`, as a crash would. */
      killNode(i: number): Promise<void>;
      /** Starts node `i` again on its data; resolves once all three serve as one cluster. */
      startNode(i: number): Promise<void>;
      /** SIGKILLs all three nodes at once and starts them again on their data; resolves once all serve. */
      restartAll(): Promise<void>;
      /** Runs `work` with the cluster to itself, for a test that kills its nodes. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
    /** Data nodes 1 (master at first) and 2, three sentinels, started by the Sentinel tests. */
    readonly "redis-sentinel": {
      up(log: (line: string) => void): Promise<Started>;
      down(log: (line: string) => void): Promise<boolean>;
      env(): Record<string, string>;
      /** The data node the sentinels name as the master. */
      master(): Promise<number>;
      /** SIGKILLs data node `i`, as a crash would. */
      killData(i: number): Promise<void>;
      /** Waits until the sentinels name another master, which answers as one; answers the ms. */
      waitFailover(i: number, options?: { timeoutMs?: number }): Promise<number>;
      /** Starts data node `i` again; resolves once the set is whole (it a replica). */
      startData(i: number): Promise<void>;
      /** Runs `work` with the set to itself, for a test that kills its master. */
      exclusive<T>(work: () => Promise<T>): Promise<T>;
    };
  };
}
