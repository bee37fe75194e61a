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
  };
}
