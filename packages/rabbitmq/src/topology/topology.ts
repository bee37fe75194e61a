// The topology a service declares or expects on the server: exchanges, queues, and the bindings
// between them, as plain data. The descriptors build it (sources.ts, exchange.ts); the client
// declares or checks it (client/topologyCheck.ts) and the in-process stand-in keeps it
// (inProcess/), so both sides read one shape.

/** A value an AMQP argument or header table carries. */
export type TableValue =
  | string
  | number
  | bigint
  | boolean
  | null
  | Uint8Array
  | TableValue[]
  | { readonly [name: string]: TableValue };

/** An AMQP argument table: `x-queue-type`, `x-delivery-limit`, `x-match`, ... */
export type Table = Readonly<Record<string, TableValue>>;

export type QueueType = "classic" | "quorum" | "stream";

export type ExchangeType = "direct" | "topic" | "fanout" | "headers" | "x-consistent-hash";

export const exchangeTypes: readonly ExchangeType[] = [
  "direct",
  "topic",
  "fanout",
  "headers",
  "x-consistent-hash",
];

export interface QueueSpec {
  readonly name: string;
  readonly durable: boolean;
  readonly exclusive: boolean;
  readonly autoDelete: boolean;
  /** Every argument the queue is declared with, `x-queue-type` among them. */
  readonly arguments: Table;
}

export interface ExchangeSpec {
  readonly name: string;
  readonly type: ExchangeType;
  readonly durable: boolean;
  readonly autoDelete: boolean;
  readonly internal: boolean;
  readonly arguments: Table;
}

/** A binding from an exchange to a queue or to another exchange. */
export interface BindingSpec {
  readonly source: string;
  readonly destination: string;
  readonly destinationKind: "queue" | "exchange";
  /** The routing key or pattern (for a consistent-hash exchange, the weight). */
  readonly routingKey: string;
  /** A headers exchange's match (`x-match` and the header values), else empty. */
  readonly arguments: Table;
}

export interface Topology {
  readonly exchanges: readonly ExchangeSpec[];
  readonly queues: readonly QueueSpec[];
  readonly bindings: readonly BindingSpec[];
}

export const emptyTopology: Topology = { exchanges: [], queues: [], bindings: [] };

/** One topology holding both, each exchange, queue and binding once (the first one given wins). */
export function mergeTopology(a: Topology, b: Topology): Topology {
  return {
    exchanges: firstOf([...a.exchanges, ...b.exchanges], (x) => x.name),
    queues: firstOf([...a.queues, ...b.queues], (q) => q.name),
    bindings: firstOf([...a.bindings, ...b.bindings], (x) =>
      JSON.stringify([x.source, x.destination, x.destinationKind, x.routingKey, x.arguments]),
    ),
  };
}

function firstOf<T>(items: readonly T[], key: (item: T) => string): T[] {
  const kept = new Map<string, T>();
  for (const item of items) if (!kept.has(key(item))) kept.set(key(item), item);
  return [...kept.values()];
}

/** The queue's type, as its `x-queue-type` argument says (classic when absent). */
export function queueTypeOf(queue: QueueSpec): QueueType {
  const type = queue.arguments["x-queue-type"];
  return type === "quorum" || type === "stream" ? type : "classic";
}
