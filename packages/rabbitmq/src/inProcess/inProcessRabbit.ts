import { type Clock, RustStreamError, systemClock } from "@ruststream/core";
import { type Coordinator, noCoordinator } from "@ruststream/core/broker";
import type { LinkDelivery, PublishRequest, StreamBounds } from "../link.js";
import { topologyRefusal, unroutable } from "../topology/refusal.js";
import {
  type BindingSpec,
  type ExchangeSpec,
  type ExchangeType,
  type QueueSpec,
  queueTypeOf,
  type Table,
  type Topology,
} from "../topology/topology.js";
import { nothingCommitted, unroutableAtCommit } from "../transactionRefusal.js";
import { matches, pickByHash } from "./routing.js";
import { StandInLink, type StandInServer } from "./standInLink.js";
import { type QueueHost, StandInQueue } from "./standInQueue.js";
import { StandInStream } from "./standInStream.js";
import { type DeathReason, deathHeaders, type StoredMessage, stored } from "./storedMessage.js";

const replyPrefix = "amq.rabbitmq.reply-to.";

/** The exchanges every vhost has, as the server declares them. */
function builtIn(name: string, type: ExchangeType): ExchangeSpec {
  return { name, type, durable: true, autoDelete: false, internal: false, arguments: {} };
}

/**
 * An in-process stand-in of a RabbitMQ vhost, for TestApp: exchanges of every type the package
 * uses and their bindings (to queues and to other exchanges), queues with prefetch, ack and reject,
 * a quorum queue's delivery count and limit, TTLs and dead-letter exchanges, confirms (a publish
 * resolves once routed), transactions (routed at their commit), mandatory returns, and direct
 * reply-to. Declarations are checked as the
 * server checks them: a queue or exchange declared again with other settings is refused with the
 * server's code and words, a passive check of a missing one too. One per broker object, so a
 * second connection finds what the first left.
 */
export class InProcessRabbit implements QueueHost, StandInServer {
  readonly #exchanges = new Map<string, ExchangeSpec>([
    ["", builtIn("", "direct")],
    ["amq.direct", builtIn("amq.direct", "direct")],
    ["amq.topic", builtIn("amq.topic", "topic")],
    ["amq.fanout", builtIn("amq.fanout", "fanout")],
    ["amq.headers", builtIn("amq.headers", "headers")],
    ["amq.match", builtIn("amq.match", "headers")],
  ]);
  readonly #queues = new Map<string, StandInQueue | StandInStream>();
  #bindings: BindingSpec[] = [];
  readonly #replyInboxes = new Map<string, (reply: LinkDelivery) => void>();
  #links = 0;
  clock: Clock = systemClock;
  coordinator: Coordinator = noCoordinator;

  /** The test's clock and coordinator, given at each in-process connect. */
  attach(clock: Clock, coordinator: Coordinator): void {
    this.clock = clock;
    this.coordinator = coordinator;
  }

  link(): StandInLink {
    return new StandInLink(this, `${++this.#links}`);
  }

  queue(name: string): StandInQueue | StandInStream {
    const queue = this.#queues.get(name);
    if (queue === undefined) {
      throw topologyRefusal(`queue "${name}"`, 404, `NOT_FOUND - no queue '${name}' in vhost '/'`);
    }
    return queue;
  }

  streamBounds(name: string): StreamBounds {
    const queue = this.queue(name);
    if (!(queue instanceof StandInStream)) {
      throw new RustStreamError(
        "invalid-argument",
        `cannot read the offsets of stream "${name}": it is a ${queueTypeOf(queue.spec)} queue`,
      );
    }
    return queue.bounds;
  }

  /** What a passive `queue.declare` answers: the ready messages (a stream's length). */
  queueCounts(names: readonly string[]): readonly number[] {
    return names.map((name) => {
      const queue = this.queue(name);
      if (queue instanceof StandInStream) return Number(queue.bounds.next - queue.bounds.first);
      return queue.messageCount;
    });
  }

  ensure(topology: Topology, declare: boolean): void {
    for (const exchange of topology.exchanges) this.#ensureExchange(exchange, declare);
    for (const queue of topology.queues) this.#ensureQueue(queue, declare);
    if (!declare) return;
    for (const binding of topology.bindings) {
      if (!this.#exchanges.has(binding.source)) {
        throw topologyRefusal(
          `exchange "${binding.source}"`,
          404,
          `NOT_FOUND - no exchange '${binding.source}' in vhost '/'`,
        );
      }
      const known =
        binding.destinationKind === "queue"
          ? this.#queues.has(binding.destination)
          : this.#exchanges.has(binding.destination);
      if (!known) {
        throw topologyRefusal(
          `${binding.destinationKind} "${binding.destination}"`,
          404,
          `NOT_FOUND - no ${binding.destinationKind} '${binding.destination}' in vhost '/'`,
        );
      }
      const same = (b: BindingSpec) =>
        b.source === binding.source &&
        b.destination === binding.destination &&
        b.destinationKind === binding.destinationKind &&
        b.routingKey === binding.routingKey &&
        sameTable(b.arguments, binding.arguments);
      if (!this.#bindings.some(same)) this.#bindings.push(binding);
    }
  }

  /** Routes a published message; with `mandatory`, a message routed nowhere is refused. */
  publish(request: PublishRequest): void {
    const missing = this.#missingExchange(request);
    if (missing !== undefined) {
      throw new RustStreamError("broker-failure", `publishing to RabbitMQ: ${missing}`);
    }
    if (!this.#deliver(request) && request.mandatory) {
      throw unroutable(request.exchange, request.routingKey, "NO_ROUTE");
    }
  }

  /**
   * A transaction's commit, as the server makes it: a publish to a missing exchange is refused
   * when it arrives (closing the channel, which discards the transaction: nothing is routed);
   * otherwise every message is routed at once, and the `mandatory` ones routed nowhere are
   * returned while the rest stay published.
   */
  commit(requests: readonly PublishRequest[]): void {
    for (const request of requests) {
      const missing = this.#missingExchange(request);
      if (missing !== undefined) throw nothingCommitted(requests, missing);
    }
    const returned = requests.filter((r) => !this.#deliver(r) && r.mandatory);
    if (returned.length > 0) throw unroutableAtCommit(requests, returned, "NO_ROUTE");
  }

  /** The server's words for a publish to an exchange that does not exist, else nothing. */
  #missingExchange(request: PublishRequest): string | undefined {
    if (this.#exchanges.has(request.exchange)) return undefined;
    if (request.exchange === "" && request.routingKey.startsWith(replyPrefix)) return undefined;
    return `NOT_FOUND - no exchange '${request.exchange}' in vhost '/'`;
  }

  /** Enqueues the message wherever it routes, or hands a reply to its inbox; false if nowhere. */
  #deliver(request: PublishRequest): boolean {
    if (request.exchange === "" && request.routingKey.startsWith(replyPrefix)) {
      const inbox = this.#replyInboxes.get(request.routingKey);
      if (inbox === undefined) return false;
      const reply = stored("", request.routingKey, request.content.slice(), request.properties);
      queueMicrotask(() => inbox(replyOf(reply)));
      return true;
    }
    const queues = this.#route(request.exchange, request.routingKey, request.properties.headers);
    for (const queue of queues) {
      queue.enqueue(
        stored(request.exchange, request.routingKey, request.content.slice(), request.properties),
      );
    }
    return queues.size > 0;
  }

  /** Where replies to a link's requests go: its own address under direct reply-to. */
  openReplyInbox(id: string, deliver: (reply: LinkDelivery) => void): string {
    const address = `${replyPrefix}${id}`;
    this.#replyInboxes.set(address, deliver);
    return address;
  }

  closeReplyInbox(address: string): void {
    this.#replyInboxes.delete(address);
  }

  // QueueHost
  deadLetter(queue: StandInQueue, message: StoredMessage, reason: DeathReason): void {
    const exchange = queue.spec.arguments["x-dead-letter-exchange"];
    if (typeof exchange !== "string" || !this.#exchanges.has(exchange)) return;
    const key = queue.spec.arguments["x-dead-letter-routing-key"];
    const routingKey = typeof key === "string" ? key : message.routingKey;
    const { expiration: _expiration, ...properties } = message.properties;
    const headers = deathHeaders(properties.headers, queue.name, reason, message, Date.now());
    // Dead-lettering is not mandatory: a copy routed nowhere is gone, as on the server, and so is
    // one routed to a stream (3.10 drops those).
    for (const target of this.#route(exchange, routingKey, headers)) {
      if (target instanceof StandInStream) continue;
      target.enqueue(stored(exchange, routingKey, message.content, { ...properties, headers }));
    }
  }

  #route(
    exchangeName: string,
    routingKey: string,
    headers: Table,
    seen = new Set<string>(),
  ): Set<StandInQueue | StandInStream> {
    const found = new Set<StandInQueue | StandInStream>();
    if (exchangeName === "") {
      const queue = this.#queues.get(routingKey);
      if (queue !== undefined) found.add(queue);
      return found;
    }
    const exchange = this.#exchanges.get(exchangeName);
    if (exchange === undefined || seen.has(exchangeName)) return found;
    seen.add(exchangeName);
    const candidates = this.#bindings.filter((b) => b.source === exchangeName);
    const chosen =
      exchange.type === "x-consistent-hash"
        ? pickByHash(candidates, routingKey)
        : candidates.filter((b) => matches(exchange.type, b, routingKey, headers));
    for (const binding of chosen) {
      if (binding.destinationKind === "queue") {
        const queue = this.#queues.get(binding.destination);
        if (queue !== undefined) found.add(queue);
      } else {
        for (const q of this.#route(binding.destination, routingKey, headers, seen)) found.add(q);
      }
    }
    return found;
  }

  #ensureExchange(exchange: ExchangeSpec, declare: boolean): void {
    if (exchange.name === "" || exchange.name.startsWith("amq.")) return;
    const what = `exchange "${exchange.name}"`;
    const existing = this.#exchanges.get(exchange.name);
    if (existing === undefined) {
      if (!declare) {
        throw topologyRefusal(what, 404, `NOT_FOUND - no exchange '${exchange.name}' in vhost '/'`);
      }
      this.#exchanges.set(exchange.name, exchange);
      return;
    }
    const difference =
      existing.type !== exchange.type
        ? `inequivalent arg 'type' for exchange '${exchange.name}' in vhost '/': received '${exchange.type}' but current is '${existing.type}'`
        : differences("exchange", exchange.name, existing, exchange);
    if (difference !== undefined)
      throw topologyRefusal(what, 406, `PRECONDITION_FAILED - ${difference}`);
  }

  #ensureQueue(queue: QueueSpec, declare: boolean): void {
    const what = `queue "${queue.name}"`;
    const existing = this.#queues.get(queue.name);
    if (existing === undefined) {
      if (!declare) {
        throw topologyRefusal(what, 404, `NOT_FOUND - no queue '${queue.name}' in vhost '/'`);
      }
      this.#queues.set(
        queue.name,
        queueTypeOf(queue) === "stream"
          ? new StandInStream(queue, this)
          : new StandInQueue(queue, this),
      );
      return;
    }
    const difference = differences("queue", queue.name, existing.spec, queue);
    if (difference !== undefined)
      throw topologyRefusal(what, 406, `PRECONDITION_FAILED - ${difference}`);
  }
}

/** The first property or argument the server would find inequivalent, in its words. */
function differences(
  kind: "queue" | "exchange",
  name: string,
  current: QueueSpec | ExchangeSpec,
  received: QueueSpec | ExchangeSpec,
): string | undefined {
  for (const flag of ["durable", "autoDelete"] as const) {
    if (current[flag] !== received[flag]) {
      const arg = flag === "autoDelete" ? "auto_delete" : flag;
      return `inequivalent arg '${arg}' for ${kind} '${name}' in vhost '/': received '${received[flag]}' but current is '${current[flag]}'`;
    }
  }
  const names = new Set([...Object.keys(current.arguments), ...Object.keys(received.arguments)]);
  for (const arg of names) {
    const a = current.arguments[arg];
    const b = received.arguments[arg];
    if (!sameValue(a, b)) {
      return `inequivalent arg '${arg}' for ${kind} '${name}' in vhost '/': received ${b === undefined ? "none" : `'${String(b)}'`} but current is ${a === undefined ? "none" : `'${String(a)}'`}`;
    }
  }
  return undefined;
}

function sameTable(a: Table, b: Table): boolean {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const name of names) if (!sameValue(a[name], b[name])) return false;
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function replyOf(message: StoredMessage): LinkDelivery {
  return {
    queue: "amq.rabbitmq.reply-to",
    exchange: message.exchange,
    routingKey: message.routingKey,
    content: message.content,
    properties: message.properties,
    redelivered: false,
    ack: () => {},
    reject: () => {},
  };
}
