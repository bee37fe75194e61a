// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): what these
// tests use of it, typed here.
declare module "@ruststream/tooling-brokers" {
  export function ensureBrokers(names: string[], log?: (line: string) => void): Promise<void>;
  export const brokers: {
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
