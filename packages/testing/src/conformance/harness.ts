import type {
  Broker,
  ClosedBroker,
  ConnectedBroker,
  Delivery,
  Publisher,
  Source,
} from "@ruststream/core";
import { type Capabilities, checkCapabilities } from "./capabilities.js";

/** A connected broker of any kind, as the suites drive it. */
export type AnyConnected = ConnectedBroker<Source, Delivery, Publisher<never>, ClosedBroker>;

/** The descriptors a connected broker type subscribes to. */
export type SourceOf<TConnected extends AnyConnected> = Exclude<
  Parameters<TConnected["subscribe"]>[0],
  string
>;

/** How long the suites wait. Real brokers over a network may need more than the defaults. */
export interface Timing {
  /** How long a message may take to arrive (default 5000 ms). */
  readonly arrivalMs?: number;
  /** How long nothing must arrive to count as "never comes back" (default 300 ms). */
  readonly silenceMs?: number;
}

/** What every suite takes. */
export interface BrokerFactories<TConnected extends AnyConnected> {
  /**
   * Builds the broker, synchronously. Each call stands for a new client of the same server, and
   * the suites connect it once; an in-process broker, whose object is the server, returns the same
   * object each time.
   */
  readonly makeBroker: () => Broker<TConnected>;
  /** The descriptor for a subject; the same subject must mean the same consumer group each time. */
  readonly makeSource: (name: string) => SourceOf<TConnected>;
  /** A live publisher; by default the broker's own default policy, paired. */
  readonly makePublisher?: (connected: TConnected) => Promise<Publisher<never>>;
  /** What the source and the publisher do; the suites hold the broker to it. */
  readonly capabilities: Capabilities;
  readonly timing?: Timing;
}

/** The factories with their types erased: what scenarios run against. */
export interface Harness {
  makeBroker(): Broker<AnyConnected>;
  connect(): Promise<AnyConnected>;
  source(name: string): Source;
  publisher(connected: AnyConnected): Promise<Publisher<never>>;
  readonly capabilities: Capabilities;
  readonly arrivalMs: number;
  readonly silenceMs: number;
}

export function harnessOf<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): Harness {
  // The one place the broker's own types are erased; every factory keeps its types at the call site.
  const f = factories as unknown as BrokerFactories<AnyConnected>;
  checkCapabilities(f.capabilities);
  return {
    makeBroker: () => f.makeBroker(),
    connect: () => f.makeBroker().connect(),
    source: (name) => f.makeSource(name),
    publisher: (connected) =>
      f.makePublisher?.(connected) ?? connected.defaultPublishPolicy().pair(connected),
    capabilities: f.capabilities,
    arrivalMs: f.timing?.arrivalMs ?? 5000,
    silenceMs: f.timing?.silenceMs ?? 300,
  };
}

/** Opens a connection for one scenario and always shuts it down, whatever the scenario did. */
export async function withConnection<T>(
  h: Harness,
  body: (connected: AnyConnected) => Promise<T>,
): Promise<T> {
  const connected = await h.connect();
  try {
    return await body(connected);
  } finally {
    await connected.shutdown();
  }
}
