// The Node rows by key, for a row's process of its own (../rows/rowChild.ts runs `runRow`): our wire
// client's producer and consume loops, and the full app (rows.ts). The Java rows run in the Java
// worker's process instead (javaWorker.ts).
import { appConsume, type Measured, wireConsume, wireProduce } from "./rows.js";

/** One Node row's run: a topic created (and, for a consume row, filled) before it. */
export interface NodeTrial {
  readonly url: string;
  readonly topic: string;
  readonly subscription: string;
  readonly count: number;
  /** Produce rows: messages the producer may have unconfirmed. */
  readonly window: number;
}

const nodeRows: Readonly<Record<string, (trial: NodeTrial) => Promise<Measured>>> = {
  "produce-wire": (t) => wireProduce(t.url, t.topic, t.count, t.window),
  "consume-wire": (t) => wireConsume(t.url, t.topic, t.subscription, t.count, false),
  "consume-bare": (t) => wireConsume(t.url, t.topic, t.subscription, t.count, true),
  app: (t) => appConsume(t.url, t.topic, t.subscription, t.count),
};

export const nodeRowKeys = Object.keys(nodeRows);

/** The row module's entry (../rows/protocol.ts). */
export function runRow(key: string, trial: unknown): Promise<Measured> {
  const row = nodeRows[key];
  if (row === undefined) throw new Error(`not a Node row: ${key}`);
  return row(trial as NodeTrial);
}
