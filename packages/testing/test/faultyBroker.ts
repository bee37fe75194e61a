import {
  type ConnectedMemoryBroker,
  type Coordinator,
  HeaderMap,
  headerNames,
  type InProcessOptions,
  MemoryBroker,
  type MemoryDelivery,
  type MemoryPublisher,
  type MemorySource,
  type MemorySubscription,
  type OutgoingMessage,
  type RawMessage,
  type RequestOptions,
  RustStreamError,
  readRetryCount,
  writeRetryCount,
} from "@ruststream/core";

/** Deliberate mistakes, each one a real broker could make; every suite must catch at least one. */
export interface Faults {
  /** `nack({ requeue: true })` acks instead, and still answers `ok`. */
  readonly ackOnRequeue?: boolean;
  /** Publishers keep "succeeding" after shutdown. */
  readonly liveAfterShutdown?: boolean;
  /** Shutdown acks whatever is unsettled instead of handing it back. */
  readonly ackAbandonedAtShutdown?: boolean;
  /** Publishing drops headers whose value is empty. */
  readonly dropEmptyHeaders?: boolean;
  /** Publishing drops the framework's retry-count header. */
  readonly stripRetryCount?: boolean;
  /** A requeued message comes back without one of its other headers. */
  readonly requeueLosesHeader?: boolean;
  /** A requeued message comes back with another header's value rewritten. */
  readonly requeueRewritesHeader?: boolean;
  /** A requeue raises the retry-count header and the broker's `redeliveryCount` both. */
  readonly requeueCountsTwice?: boolean;
  /** A requeue raises neither: every delivery reports `redeliveryCount` 1, the header untouched. */
  readonly requeueCountsNothing?: boolean;
  /** Subscribing completes half a retry declaration instead of refusing it. */
  readonly acceptHalfDeclaration?: boolean;
  /** Batches hold one more delivery than asked for. */
  readonly oversizedBatches?: boolean;
  /** `seek()` resolves without moving. */
  readonly ignoreSeek?: boolean;
  /** Transactional publishes become visible at once. */
  readonly leakyTransactions?: boolean;
  /** A request resolves with whichever reply comes first, correlated or not. */
  readonly uncorrelatedReplies?: boolean;
  /** The server description shows the URL as configured, password included. */
  readonly leakUrl?: string;
  /** The in-process transport never reports what it enqueued. */
  readonly uncounted?: boolean;
}

// A proxy that answers `overrides` first and otherwise forwards to the target, with the target as
// `this`, so the memory classes' private fields keep working.
function wrap<T extends object>(target: T, overrides: Record<PropertyKey, unknown>): T {
  return new Proxy(target, {
    get(t, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key];
      const value: unknown = Reflect.get(t, key, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

function filterHeaders(message: OutgoingMessage, faults: Faults): OutgoingMessage {
  if (message.headers === undefined) return message;
  const headers = new HeaderMap();
  for (const [key, value] of message.headers) {
    if (faults.dropEmptyHeaders && value.length === 0) continue;
    if (faults.stripRetryCount && key === headerNames.retryCount) continue;
    headers.set(key, value);
  }
  return { ...message, headers };
}

/** The headers a broker with a requeue fault would show on a message that came back. */
function requeuedHeaders(delivery: MemoryDelivery, faults: Faults): HeaderMap {
  const headers = delivery.headers.clone();
  const others = [...headers.keys()].filter((name) => name !== headerNames.retryCount);
  const victim = others.at(-1);
  if (faults.requeueLosesHeader && victim !== undefined) headers.delete(victim);
  if (faults.requeueRewritesHeader && victim !== undefined) headers.set(victim, "rewritten");
  if (faults.requeueCountsTwice) {
    writeRetryCount(headers, readRetryCount(headers) + delivery.redeliveryCount - 1);
  }
  return headers;
}

function faultyDelivery(delivery: MemoryDelivery, faults: Faults): MemoryDelivery {
  const overrides: Record<PropertyKey, unknown> = {};
  if (faults.ackOnRequeue) {
    overrides.nack = (options: { requeue: boolean }) =>
      options.requeue ? delivery.ack() : delivery.nack(options);
  }
  if (delivery.redeliveryCount > 1) {
    if (faults.requeueLosesHeader || faults.requeueRewritesHeader || faults.requeueCountsTwice) {
      overrides.headers = requeuedHeaders(delivery, faults);
    }
    if (faults.requeueCountsNothing) overrides.redeliveryCount = 1;
  }
  return Object.keys(overrides).length === 0 ? delivery : wrap(delivery, overrides);
}

function faultySubscription(
  subscription: MemorySubscription,
  faults: Faults,
  held: Set<MemoryDelivery>,
): MemorySubscription {
  const track = (d: MemoryDelivery) => {
    held.add(d);
    return faultyDelivery(d, faults);
  };
  return wrap(subscription, {
    next: async () => {
      const next = await subscription.next();
      return next.done ? next : { done: false, value: track(next.value) };
    },
    nextBatch: async (max: number) =>
      (await subscription.nextBatch(faults.oversizedBatches ? max + 1 : max)).map(track),
    seek: faults.ignoreSeek ? async () => {} : subscription.seek.bind(subscription),
  });
}

function faultyPublisher(
  publisher: MemoryPublisher,
  connected: ConnectedMemoryBroker,
  faults: Faults,
  replies: (timeoutMs: number) => Promise<RawMessage>,
): MemoryPublisher {
  const publish = (message: OutgoingMessage) => {
    if (faults.liveAfterShutdown && connected.state === "closed") {
      return Promise.resolve({ name: message.name });
    }
    return publisher.publish(filterHeaders(message, faults));
  };
  return wrap(publisher, {
    publish,
    transaction: faults.leakyTransactions
      ? <T>(work: (tx: { publish(m: OutgoingMessage): Promise<void> }) => Promise<T>) =>
          work({ publish: async (m) => void (await publish(m)) })
      : publisher.transaction.bind(publisher),
    request: faults.uncorrelatedReplies
      ? async (message: OutgoingMessage, options: RequestOptions) => {
          const waiting = replies(options.timeoutMs);
          waiting.catch(() => {}); // rejected while the request is still being published
          const headers = message.headers?.clone() ?? new HeaderMap();
          headers.set(headerNames.replyTo, inboxOf(connected)).set(headerNames.correlationId, "x");
          await publish({ ...message, headers });
          return waiting;
        }
      : publisher.request.bind(publisher),
  });
}

const inboxes = new WeakMap<object, string>();
function inboxOf(connected: object): string {
  let inbox = inboxes.get(connected);
  if (inbox === undefined) {
    inbox = `faulty-inbox-${Math.random().toString(16).slice(2)}`;
    inboxes.set(connected, inbox);
  }
  return inbox;
}

function faultyConnection(connected: ConnectedMemoryBroker, faults: Faults): ConnectedMemoryBroker {
  const held = new Set<MemoryDelivery>();
  // The uncorrelated requester: one inbox per connection, each reply to the oldest waiting request.
  const waiting: Array<(reply: RawMessage) => void> = [];
  let listening = false;
  const replies = (timeoutMs: number) => {
    if (!listening) {
      listening = true;
      const listen = async () => {
        const inbox = await connected.subscribe(inboxOf(connected));
        for (;;) {
          const next = await inbox.next();
          if (next.done) return;
          next.value.ack();
          waiting.shift()?.(next.value);
        }
      };
      listen().catch(() => {}); // ends with the connection
    }
    return new Promise<RawMessage>((resolve, reject) => {
      const deliver = (reply: RawMessage) => {
        clearTimeout(timer);
        resolve(reply);
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(deliver), 1);
        reject(new RustStreamError("timeout", "no reply"));
      }, timeoutMs);
      waiting.push(deliver);
    });
  };
  const self: ConnectedMemoryBroker = wrap(connected, {
    subscribe: async (source: string | MemorySource) => {
      let target = source;
      if (
        faults.acceptHalfDeclaration &&
        typeof source !== "string" &&
        source.copies === "broker"
      ) {
        const retry = source.retry;
        if (retry !== undefined) {
          target = source.declareRetry({
            maxAttempts: retry.maxAttempts ?? 1,
            deadLetter: retry.deadLetter ?? `${source.name}-dlq`,
          });
        }
      }
      return faultySubscription(await connected.subscribe(target), faults, held);
    },
    pairPublisher: () => faultyPublisher(connected.pairPublisher(), connected, faults, replies),
    defaultPublishPolicy: () => ({
      ...connected.defaultPublishPolicy(),
      pair: async () => faultyPublisher(connected.pairPublisher(), connected, faults, replies),
    }),
    describeServer: () =>
      faults.leakUrl === undefined
        ? connected.describeServer()
        : { protocol: "memory", host: faults.leakUrl },
    shutdown: async () => {
      if (faults.ackAbandonedAtShutdown && connected.state === "connected") {
        for (const d of held) if (!d.settled) d.ack();
      }
      return connected.shutdown();
    },
  });
  return self;
}

/** A memory broker with `faults`; like the real one, the object is the server. */
export function faultyBroker(faults: Faults, server = new MemoryBroker()): MemoryBroker {
  const uncounted = (options: InProcessOptions): InProcessOptions => {
    if (!faults.uncounted) return options;
    const coordinator: Coordinator = {
      enqueued: () => {},
      consumed: (n) => options.coordinator.consumed(n),
    };
    return { ...options, coordinator };
  };
  return wrap(server, {
    connect: async () => faultyConnection(await server.connect(), faults),
    connectInProcess: async (options: InProcessOptions) =>
      faultyConnection(await server.connectInProcess(uncounted(options)), faults),
  });
}
