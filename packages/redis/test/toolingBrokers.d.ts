// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): what these
// tests use of it, typed here.
declare module "@ruststream/tooling-brokers" {
  export function ensureBrokers(names: string[], log?: (line: string) => void): Promise<void>;
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
  };
}
