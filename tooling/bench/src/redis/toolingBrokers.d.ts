// tooling/brokers is plain JavaScript (checked with JSDoc, no declarations emitted): the one function
// this bench uses, typed here.
declare module "@ruststream/tooling-brokers" {
  export function ensureBrokers(names: string[], log?: (line: string) => void): Promise<void>;
}
