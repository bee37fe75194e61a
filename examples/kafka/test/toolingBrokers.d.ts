// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): what the global
// setup uses of it, typed here.
declare module "@ruststream/tooling-brokers" {
  export function ensureBrokers(names: string[], log?: (line: string) => void): Promise<void>;
}
