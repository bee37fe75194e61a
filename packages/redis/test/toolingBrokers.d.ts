// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): what these
// tests use of it, typed here.
declare module "@ruststream/tooling-brokers" {
  export function ensureBrokers(names: string[], log?: (line: string) => void): Promise<void>;
  /** What `up` answers: whether it already ran, where, and how long the start took. */
  interface Started {
    readonly already: boolean;
    readonly address: string;
    readonly ms: number;
  }
  export const brokers: {
    readonly redis: {
      restart(
        instance: "plain" | "persistent" | "protected" | "tls",
        options?: { hard?: boolean },
      ): Promise<void>;
      /** Runs `work` with the instance to itself, for a test that restarts it. */
      exclusive<T>(
        instance: "plain" | "persistent" | "protected" | "tls",
        work: () => Promise<T>,
      ): Promise<T>;
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
