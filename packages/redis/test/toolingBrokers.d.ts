// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): the two
// functions these tests use, typed here.
declare module "@ruststream/tooling-brokers" {
  export function ensureBrokers(names: string[], log?: (line: string) => void): Promise<void>;
  export const brokers: {
    readonly redis: {
      restart(
        instance: "plain" | "persistent" | "protected" | "tls",
        options?: { hard?: boolean },
      ): Promise<void>;
    };
  };
}
