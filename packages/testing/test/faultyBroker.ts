import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Broker,
  type ConnectedMemoryBroker,
  HeaderMap,
  headerNames,
  MemoryBroker,
  type MemoryDelivery,
  type MemoryPublisher,
  MemoryQueue,
  type MemorySource,
  type MemorySubscription,
  MemoryTopic,
  type NackOptions,
  type OutgoingMessage,
  type RawMessage,
  type Receipt,
  type RequestOptions,
  type RetryDeclaration,
  RustStreamError,
  readRetryCount,
  type SettleResult,
} from "@ruststream/core";
import {
  type Coordinator,
  type InProcessOptions,
  partitionKeyBytes,
  writeRetryCount,
} from "@ruststream/core/broker";

/**
 * Deliberate mistakes, each one a real broker could make. Every scenario of every suite must fail
 * under at least one of them (faultyBroker.test.ts), or it is not testing anything.
 */
export interface Faults {
  /** The constructor starts a timer, as a client that connects eagerly would. */
  readonly ioInConstructor?: boolean;
  /**
   * Shutdown waits for each subscription's consumer loop to end, and the loop starts at the first
   * pull: with a subscription never pulled, shutdown never returns.
   */
  readonly shutdownWaitsForFirstPull?: boolean;
  /** A second `shutdown()` rejects instead of answering the same closed witness. */
  readonly secondShutdownFails?: boolean;
  /** Publishers keep "succeeding" after shutdown. */
  readonly liveAfterShutdown?: boolean;
  /** A request after shutdown waits out its timeout instead of failing at once. */
  readonly requestAfterShutdownWaits?: boolean;
  /** A request gives up 30 ms before its timeout, as a timer started before its publish would. */
  readonly requestTimesOutEarly?: boolean;
  /** Shutdown acks whatever is unsettled instead of handing it back. */
  readonly ackAbandonedAtShutdown?: boolean;
  /** A publish resolves at once and is sent after the next one: neighbours swap places. */
  readonly swapPairs?: boolean;
  /**
   * A keyed publish resolves at once and is sent after the next one of its key, as a client that
   * spreads one key over racing connections would: each key's neighbours swap places.
   */
  readonly swapPerKey?: boolean;
  /** Publishes in flight at once share one slot: all but the last are lost (that one repeats). */
  readonly concurrentPublishLost?: boolean;
  /**
   * Subscriptions without a group join one shared group, as a broker naming its consumer group
   * after the subject would: each gets part of the messages instead of every one.
   */
  readonly oneGroup?: boolean;
  /** A new subscription starts at the oldest retained message, whatever it declared. */
  readonly replayBacklog?: boolean;
  /** `ack()` answers `ok` and requeues. */
  readonly ackRequeues?: boolean;
  /**
   * Each client reads in a consumer group of its own, as a broker that names its group per process
   * would: what one client left unsettled never reaches the next.
   */
  readonly groupPerClient?: boolean;
  /** `ack()` answers `ok` but is only kept by this client: a new client gets the message again. */
  readonly ackNotDurable?: boolean;
  /**
   * `ack()` of a delivery handed out before its subscription closed answers `ok` and does nothing:
   * the message comes back to a new client, as if the close had taken the settle's way with it.
   */
  readonly ackAfterCloseLost?: boolean;
  /** `nack({ requeue: false })` answers `ok` and requeues. */
  readonly dropRequeues?: boolean;
  /** `nack({ requeue: true })` acks instead, and still answers `ok`. */
  readonly ackOnRequeue?: boolean;
  /** `nack({ requeue: true })` answers `unsupported` though the broker declares requeue. */
  readonly requeueUnsupported?: boolean;
  /** `nackAfter(ms)` requeues at once. */
  readonly nackAfterEarly?: boolean;
  /** Publishing keeps only the framework's own headers, as a wire with fixed fields would. */
  readonly onlyFrameworkHeaders?: boolean;
  /** Publishing drops headers whose value is empty. */
  readonly dropEmptyHeaders?: boolean;
  /** Publishing drops the framework's retry-count header. */
  readonly stripRetryCount?: boolean;
  /** Publishing drops the partition key. */
  readonly losePartitionKey?: boolean;
  /** A header with an empty value is refused at publish (`publish-refused`), and sent all the same. */
  readonly refusedYetSent?: boolean;
  /** A message carrying a retry count is sent twice, as a client resending a copy it saw no answer for. */
  readonly copiesSentTwice?: boolean;
  /** A requeued message comes back without one of its other headers. */
  readonly requeueLosesHeader?: boolean;
  /** A requeued message comes back with another header's value rewritten. */
  readonly requeueRewritesHeader?: boolean;
  /** A requeue raises the retry-count header and the broker's `redeliveryCount` both. */
  readonly requeueCountsTwice?: boolean;
  /** A requeue raises neither: every delivery reports `redeliveryCount` 1, the header untouched. */
  readonly requeueCountsNothing?: boolean;
  /** A message that reaches its last attempt is moved to the dead letter twice. */
  readonly deadLetteredTwice?: boolean;
  /** A message that reaches its last attempt is moved to the dead letter and delivered again too. */
  readonly movedYetRedelivered?: boolean;
  /**
   * Each delivery reaches its consumer this many ms after it came off the broker, one at a time per
   * connection, as over a slow link fetching one message per round trip: longer than a quiet spell,
   * so whatever was on its way arrives after a scenario that only waited stopped looking.
   */
  readonly deliveryLagMs?: number;
  /** Subscribing completes half a retry declaration instead of refusing it. */
  readonly acceptHalfDeclaration?: boolean;
  /** Batches hold one more delivery than asked for. */
  readonly oversizedBatches?: boolean;
  /** Settling one element of a batch settles the rest of it the same way. */
  readonly batchSettlesTogether?: boolean;
  /** `seek()` resolves without moving. */
  readonly ignoreSeek?: boolean;
  /** Transactional publishes become visible at once. */
  readonly leakyTransactions?: boolean;
  /** A request resolves with whichever reply comes first, correlated or not. */
  readonly uncorrelatedReplies?: boolean;
  /** A request's `reply-to` names an address nobody listens on. */
  readonly unroutableReplyTo?: boolean;
  /**
   * Whatever is done from another task (`elsewhere()`, marked by {@link otherTask}) is lost: a
   * publish resolves and sends nothing, a subscription never delivers, a settle or a seek answers
   * and does nothing, as a client bound to the task that made it would.
   */
  readonly otherTaskLost?: boolean;
  /** The server description shows the URL as configured, password included. */
  readonly leakUrl?: string;
  /** The in-process transport never reports what it enqueued. */
  readonly uncounted?: boolean;
  /** The in-process transport counts an injection nobody subscribes to. */
  readonly countsUnsubscribed?: boolean;
  /** `published(name)` leaves out injected messages. */
  readonly publishedOmitsInjected?: boolean;
  /** `inject` after shutdown returns as if it had published, as Kafka's once did. */
  readonly injectsAfterShutdown?: boolean;
  /** A second `next()` while one waits queues behind it instead of being refused. */
  readonly secondPullQueues?: boolean;
}

/** Marks work run by `elsewhere()` in the faulty-broker test, which wraps it (vi.mock). */
export const otherTask = new AsyncLocalStorage<true>();

const inOtherTask = (faults: Faults) => faults.otherTaskLost === true && otherTask.getStore();

// A proxy that answers `overrides` first (a getter in `computed` is read on each access) and
// otherwise forwards to the target, with the target as `this`, so private fields keep working.
function wrap<T extends object>(
  target: T,
  overrides: Record<PropertyKey, unknown>,
  computed: Record<PropertyKey, () => unknown> = {},
): T {
  return new Proxy(target, {
    get(t, key) {
      if (Object.hasOwn(computed, key)) return computed[key]!();
      if (Object.hasOwn(overrides, key)) return overrides[key];
      const value: unknown = Reflect.get(t, key, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

const frameworkHeaders = new Set<string>(Object.values(headerNames));

function filterMessage(message: OutgoingMessage, faults: Faults): OutgoingMessage {
  let stripped = message;
  if (faults.losePartitionKey) {
    const { partitionKey: _lost, ...rest } = message;
    stripped = rest;
  }
  if (stripped.headers === undefined) return stripped;
  const headers = new HeaderMap();
  for (const [key, value] of stripped.headers) {
    if (faults.dropEmptyHeaders && value.length === 0) continue;
    if (faults.stripRetryCount && key === headerNames.retryCount) continue;
    if (faults.onlyFrameworkHeaders && !frameworkHeaders.has(key)) continue;
    headers.set(key, value);
  }
  return { ...stripped, headers };
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

/** What a connection keeps to imitate its faults. */
interface ConnectionState {
  readonly faults: Faults;
  /** Every delivery handed out, for a shutdown that acks what was abandoned. */
  readonly held: Set<MemoryDelivery>;
  /** Names with a subscription, for the injection nobody subscribes to. */
  readonly subscribed: Set<string>;
  /** Subscriptions not pulled yet, for the shutdown that waits for their first pull. */
  readonly unpulled: Set<MemorySubscription>;
  /** The slow link's last fetch: the next one waits for it, then for its own lag. */
  link: Promise<void>;
  /** Sends a message past every fault, for a fault that sends one of its own. */
  readonly send: (message: OutgoingMessage) => void;
}

/** Waits for this fetch's turn on the connection's slow link, then for its lag. */
function lagged(state: ConnectionState): Promise<void> {
  const ms = state.faults.deliveryLagMs;
  if (ms === undefined) return Promise.resolve();
  const turn = state.link.then(() => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  state.link = turn;
  return turn;
}

/** Whether a requeue of `delivery` is the one its broker-moved retry turns into a dead letter. */
function lastAttempt(delivery: MemoryDelivery, retry: RetryDeclaration | undefined): boolean {
  return retry?.deadLetter !== undefined && delivery.redeliveryCount >= (retry.maxAttempts ?? 1);
}

function faultyDelivery(
  delivery: MemoryDelivery,
  state: ConnectionState,
  retry: RetryDeclaration | undefined,
  subscriptionClosed: () => boolean,
): MemoryDelivery {
  const { faults } = state;
  // A fault that answers without settling keeps the delivery looking settled to its caller.
  let pretended = false;
  const pretend = (): SettleResult => {
    pretended = true;
    return "ok";
  };
  const settleWith = (real: () => SettleResult) => (): SettleResult =>
    inOtherTask(faults) ? pretend() : real();
  const overrides: Record<PropertyKey, unknown> = {
    ack: settleWith(() => {
      if (faults.ackNotDurable) return pretend();
      if (faults.ackAfterCloseLost && subscriptionClosed()) return pretend();
      return faults.ackRequeues ? delivery.nack({ requeue: true }) : delivery.ack();
    }),
    nack: (options: NackOptions) =>
      settleWith(() => {
        if (!options.requeue) {
          return faults.dropRequeues ? delivery.nack({ requeue: true }) : delivery.nack(options);
        }
        if (faults.requeueUnsupported) return "unsupported";
        if (faults.ackOnRequeue) return delivery.ack();
        if (
          (faults.deadLetteredTwice || faults.movedYetRedelivered) &&
          lastAttempt(delivery, retry)
        ) {
          const answer = delivery.nack(options);
          // The second copy: to the dead letter again, or back where it was moved from.
          const name = faults.deadLetteredTwice ? retry!.deadLetter! : delivery.name;
          state.send({ name, payload: delivery.payload, headers: delivery.headers.clone() });
          return answer;
        }
        return delivery.nack(options);
      })(),
    nackAfter: (ms: number) =>
      settleWith(() =>
        faults.nackAfterEarly ? delivery.nack({ requeue: true }) : delivery.nackAfter(ms),
      )(),
  };
  if (delivery.redeliveryCount > 1) {
    if (faults.requeueLosesHeader || faults.requeueRewritesHeader || faults.requeueCountsTwice) {
      overrides.headers = requeuedHeaders(delivery, faults);
    }
    if (faults.requeueCountsNothing) overrides.redeliveryCount = 1;
  }
  return wrap(delivery, overrides, { settled: () => pretended || delivery.settled });
}

/**
 * Settling one element settles the rest of its batch the same way at the broker, as a cumulative
 * acknowledgement would; the rest then answer their own settle `ok` and change nothing.
 */
function settlingTogether(batch: MemoryDelivery[]): MemoryDelivery[] {
  const applied = new Set<MemoryDelivery>();
  return batch.map((d) => {
    let answered = false;
    const settle = (verb: (x: MemoryDelivery) => SettleResult): SettleResult => {
      if (applied.has(d)) {
        answered = true;
        return "ok";
      }
      for (const other of batch) {
        if (other === d || applied.has(other) || other.settled) continue;
        applied.add(other);
        void Promise.resolve(verb(other)).catch(() => {});
      }
      return verb(d);
    };
    return wrap(
      d,
      {
        ack: () => settle((x) => x.ack()),
        nack: (options: NackOptions) => settle((x) => x.nack(options)),
      },
      { settled: () => answered || d.settled },
    );
  });
}

/** A subscription that never delivers, closed like any other. */
function deadSubscription(subscription: MemorySubscription): MemorySubscription {
  let close: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    close = resolve;
  });
  const end = async () => {
    await closed;
    return { done: true as const, value: undefined };
  };
  return wrap(subscription, {
    next: end,
    nextBatch: async () => {
      await closed;
      return [];
    },
    close: async () => {
      close();
      await subscription.close();
    },
  });
}

function faultySubscription(
  subscription: MemorySubscription,
  state: ConnectionState,
  retry: RetryDeclaration | undefined,
): MemorySubscription {
  const { faults } = state;
  let closed = false;
  const track = (d: MemoryDelivery) => {
    state.held.add(d);
    return faultyDelivery(d, state, retry, () => closed);
  };
  let waiting: Promise<unknown> | undefined;
  state.unpulled.add(subscription);
  return wrap(subscription, {
    close: async () => {
      closed = true;
      await subscription.close();
    },
    next: async () => {
      state.unpulled.delete(subscription);
      let next: IteratorResult<MemoryDelivery, undefined>;
      if (faults.secondPullQueues) {
        const before = waiting;
        const pull = (async () => {
          await before?.catch(() => undefined);
          return subscription.next();
        })();
        waiting = pull;
        next = await pull;
      } else {
        next = await subscription.next();
      }
      if (next.done) return next;
      await lagged(state);
      return { done: false, value: track(next.value) };
    },
    nextBatch: async (max: number) => {
      state.unpulled.delete(subscription);
      const fetched = await subscription.nextBatch(faults.oversizedBatches ? max + 1 : max);
      if (fetched.length > 0) await lagged(state);
      const batch = fetched.map(track);
      return faults.batchSettlesTogether ? settlingTogether(batch) : batch;
    },
    seek: async (position: Parameters<MemorySubscription["seek"]>[0]) => {
      if (faults.ignoreSeek || inOtherTask(faults)) return;
      await subscription.seek(position);
    },
  });
}

/** The publish every faulty publisher and transaction goes through. */
function publishing(
  publisher: MemoryPublisher,
  connected: ConnectedMemoryBroker,
  faults: Faults,
): (message: OutgoingMessage) => Promise<Receipt> {
  let swapped: OutgoingMessage | undefined;
  let slot: OutgoingMessage | undefined;
  const send = async (message: OutgoingMessage): Promise<Receipt> => {
    if (faults.liveAfterShutdown && connected.state === "closed") return { name: message.name };
    if (inOtherTask(faults)) return { name: message.name };
    const filtered = filterMessage(message, faults);
    if (faults.refusedYetSent && [...(message.headers ?? [])].some(([, v]) => v.length === 0)) {
      await publisher.publish(filtered);
      throw new RustStreamError("publish-refused", "a header value is empty");
    }
    const receipt = await publisher.publish(filtered);
    if (faults.copiesSentTwice && message.headers?.has(headerNames.retryCount)) {
      await publisher.publish(filtered);
    }
    return receipt;
  };
  const heldByKey = new Map<string, OutgoingMessage>();
  const swapWithinKey = async (message: OutgoingMessage, key: string): Promise<Receipt> => {
    const earlier = heldByKey.get(key);
    heldByKey.delete(key);
    if (earlier === undefined) {
      heldByKey.set(key, message);
      // Sent after the next publish of its key, or alone once none followed in this macrotask.
      setTimeout(() => {
        if (heldByKey.get(key) !== message) return;
        heldByKey.delete(key);
        void send(message).catch(() => {});
      }, 0);
      return { name: message.name };
    }
    const receipt = await send(message);
    await send(earlier);
    return receipt;
  };
  return async (message) => {
    if (faults.swapPerKey && message.partitionKey !== undefined) {
      const key = Buffer.from(partitionKeyBytes(message.partitionKey)).toString("hex");
      return swapWithinKey(message, `${message.name}/${key}`);
    }
    if (faults.concurrentPublishLost) {
      slot = message;
      await Promise.resolve();
      return send(slot);
    }
    if (!faults.swapPairs) return send(message);
    if (swapped === undefined) {
      swapped = message;
      // Sent after the next publish, or alone once nothing followed it in this macrotask.
      setTimeout(() => {
        const alone = swapped;
        swapped = undefined;
        if (alone !== undefined) void send(alone).catch(() => {});
      }, 0);
      return { name: message.name };
    }
    const earlier = swapped;
    swapped = undefined;
    const receipt = await send(message);
    await send(earlier);
    return receipt;
  };
}

function faultyPublisher(
  publisher: MemoryPublisher,
  connected: ConnectedMemoryBroker,
  faults: Faults,
  replies: (timeoutMs: number) => Promise<RawMessage>,
): MemoryPublisher {
  const publish = publishing(publisher, connected, faults);
  const request = async (message: OutgoingMessage, options: RequestOptions) => {
    if (faults.requestAfterShutdownWaits && connected.state === "closed") {
      await new Promise((resolve) => setTimeout(resolve, options.timeoutMs).unref());
      throw new RustStreamError("timeout", "no reply");
    }
    if (faults.unroutableReplyTo) {
      const headers = message.headers?.clone() ?? new HeaderMap();
      headers.set(headerNames.replyTo, `nowhere-${Math.random().toString(16).slice(2)}`);
      headers.set(headerNames.correlationId, "c");
      await publish({ ...message, headers });
      await new Promise((resolve) => setTimeout(resolve, options.timeoutMs));
      throw new RustStreamError("timeout", "no reply");
    }
    if (faults.uncorrelatedReplies) {
      const waiting = replies(options.timeoutMs);
      waiting.catch(() => {}); // rejected while the request is still being published
      const headers = message.headers?.clone() ?? new HeaderMap();
      headers.set(headerNames.replyTo, inboxOf(connected)).set(headerNames.correlationId, "x");
      await publish({ ...message, headers });
      return waiting;
    }
    // Lost from another task: nothing is sent, so nothing answers before the timeout.
    if (inOtherTask(faults)) {
      await new Promise((resolve) => setTimeout(resolve, options.timeoutMs));
      throw new RustStreamError("timeout", "no reply");
    }
    if (faults.requestTimesOutEarly) {
      const timeoutMs = Math.max(1, options.timeoutMs - 30);
      return publisher.request(filterMessage(message, faults), { ...options, timeoutMs });
    }
    return publisher.request(filterMessage(message, faults), options);
  };
  return wrap(publisher, {
    publish,
    transaction: faults.leakyTransactions
      ? <T>(work: (tx: { publish(m: OutgoingMessage): Promise<void> }) => Promise<T>) =>
          work({ publish: async (m) => void (await publish(m)) })
      : <T>(work: (tx: { publish(m: OutgoingMessage): Promise<void> }) => Promise<T>) =>
          publisher.transaction((tx) =>
            work({
              publish: (m) => (inOtherTask(faults) ? Promise.resolve() : tx.publish(m)),
            }),
          ),
    request,
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

/** The uncorrelated requester's replies: one inbox per connection, each to the oldest request. */
function uncorrelated(
  connected: ConnectedMemoryBroker,
): (timeoutMs: number) => Promise<RawMessage> {
  const waiting: Array<(reply: RawMessage) => void> = [];
  let listening = false;
  return (timeoutMs) => {
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
}

function sourceWithFaults(
  source: string | MemorySource,
  faults: Faults,
  client: number,
): string | MemorySource {
  if (typeof source === "string") return source;
  if (faults.oneGroup && source instanceof MemoryTopic && source.group === undefined) {
    return new MemoryTopic(source.name, { group: "one" });
  }
  if (faults.groupPerClient && source instanceof MemoryTopic && source.group !== undefined) {
    return new MemoryTopic(source.name, { group: `${source.group}-client-${client}` });
  }
  if (faults.replayBacklog && source instanceof MemoryTopic) {
    const group = source.group;
    return new MemoryTopic(
      source.name,
      group === undefined ? { start: "start" } : { group, start: "start" },
    );
  }
  if (faults.acceptHalfDeclaration && source.copies === "broker" && source.retry !== undefined) {
    return source.declareRetry({
      maxAttempts: source.retry.maxAttempts ?? 1,
      deadLetter: source.retry.deadLetter ?? `${source.name}-dlq`,
    });
  }
  return source;
}

/** Counts connections, so each can stand for a client of its own. */
let clients = 0;

function faultyConnection(
  connected: ConnectedMemoryBroker,
  faults: Faults,
  coordinator?: Coordinator,
): ConnectedMemoryBroker {
  const state: ConnectionState = {
    faults,
    held: new Set(),
    subscribed: new Set(),
    unpulled: new Set(),
    link: Promise.resolve(),
    send: (message) =>
      void connected
        .pairPublisher()
        .publish(message)
        .catch(() => {}),
  };
  const client = ++clients;
  const replies = uncorrelated(connected);
  // By content: the broker keeps a copy of each payload.
  const injected = new Set<string>();
  const hex = (payload: Uint8Array) => Buffer.from(payload).toString("hex");
  const publisher = () => faultyPublisher(connected.pairPublisher(), connected, faults, replies);
  return wrap(connected, {
    subscribe: async (source: string | MemorySource) => {
      const declared = sourceWithFaults(source, faults, client);
      const real = await connected.subscribe(declared);
      state.subscribed.add(typeof source === "string" ? source : source.name);
      if (inOtherTask(faults)) return deadSubscription(real);
      const retry = declared instanceof MemoryQueue ? declared.retry : undefined;
      return faultySubscription(real, state, retry);
    },
    pairPublisher: publisher,
    defaultPublishPolicy: () => ({
      ...connected.defaultPublishPolicy(),
      pair: async () => publisher(),
    }),
    describeServer: () =>
      faults.leakUrl === undefined
        ? connected.describeServer()
        : { protocol: "memory", host: faults.leakUrl },
    inject: (message: OutgoingMessage) => {
      if (faults.countsUnsubscribed && !state.subscribed.has(message.name)) {
        coordinator?.enqueued();
      }
      if (faults.publishedOmitsInjected) injected.add(hex(message.payload));
      if (faults.injectsAfterShutdown && connected.state === "closed") return;
      connected.inject(message);
    },
    published: (name: string) =>
      connected.published(name).filter((m) => !injected.has(hex(m.payload))),
    shutdown: async () => {
      if (faults.secondShutdownFails && connected.state === "closed") {
        throw new Error("already shut down");
      }
      if (faults.shutdownWaitsForFirstPull && state.unpulled.size > 0) {
        return new Promise<never>(() => {});
      }
      if (faults.ackAbandonedAtShutdown && connected.state === "connected") {
        for (const d of state.held) if (!d.settled) d.ack();
      }
      return connected.shutdown();
    },
  });
}

/** A memory broker with `faults`; like the real one, the object is the server. */
export function faultyBroker(faults: Faults, server = new MemoryBroker()): MemoryBroker {
  const uncounted = (options: InProcessOptions): InProcessOptions => {
    if (!faults.uncounted) return options;
    const coordinator: Coordinator = {
      enqueued: () => {},
      consumed: (n) => options.coordinator.consumed(n),
      park: () => options.coordinator.park(),
      unpark: () => options.coordinator.unpark(),
    };
    return { ...options, coordinator };
  };
  return wrap(server, {
    connect: async () => faultyConnection(await server.connect(), faults),
    connectInProcess: async (options: InProcessOptions) =>
      faultyConnection(
        await server.connectInProcess(uncounted(options)),
        faults,
        options.coordinator,
      ),
  });
}

/**
 * The factory a suite calls for "a new client": the server's object, and with `ioInConstructor` a
 * timer started on the way, as a constructor that connects eagerly would.
 */
export function makerOf(server: MemoryBroker, faults: Faults): () => Broker<ConnectedMemoryBroker> {
  return () => {
    if (faults.ioInConstructor) setTimeout(() => {}, 1000);
    return server;
  };
}
