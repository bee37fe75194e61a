import {
  type AddressedSource,
  type Bindings,
  type BrokerMovesSource,
  type JsonValue,
  type RetryDeclaration,
  RustStreamError,
} from "@ruststream/core";
import { positive, sourceMark } from "@ruststream/core/broker";
import { bindingFacts, bindingSpec, type RabbitBinding } from "./topology/binding.js";
import { type StreamOffset, streamOffsetArgument } from "./topology/streamOffset.js";
import {
  emptyTopology,
  mergeTopology,
  type QueueSpec,
  type QueueType,
  type Table,
  type Topology,
} from "./topology/topology.js";

export interface RabbitQueueOptions {
  /** Survives a restart of the server (default true; quorum and stream queues always are). */
  readonly durable?: boolean;
  /** Bindings to exchanges; every queue also gets the default exchange's, by its name. */
  readonly bindings?: readonly RabbitBinding[];
  /** More queue arguments (`x-max-length`, `x-overflow`, ...), declared and checked with the rest. */
  readonly arguments?: Table;
  /**
   * Messages the server sends ahead of the acks (`basic.qos`), per subscription (default 256: what
   * the runtime takes in hand at once, its own `prefetch`, however many workers share them). Lower
   * it for slow handlers on a queue several replicas share, so one replica does not sit on
   * messages another could run: about twice the subscriber's workers.
   */
  readonly prefetch?: number;
  /**
   * Declare the queue, its exchanges and bindings at subscribe (true), or check that the server has
   * them as described (false). Default: the broker's `declare` option, else false.
   */
  readonly declare?: boolean;
}

export interface RabbitClassicQueueOptions extends RabbitQueueOptions {
  readonly exclusive?: boolean;
  readonly autoDelete?: boolean;
}

export interface RabbitQuorumQueueOptions extends RabbitQueueOptions {
  /**
   * The cap and dead letter the server applies (both or neither): `x-delivery-limit` and a
   * dead-letter exchange, declared with the queue. The runtime declares them from a mount's
   * `maxAttempts` and `deadLetter`.
   */
  readonly retry?: RetryDeclaration;
}

export interface RabbitStreamOptions extends RabbitQueueOptions {
  /** Where each subscription starts reading (default `"next"`: later messages only). */
  readonly offset?: StreamOffset;
}

/**
 * The runtime pulls up to 256 deliveries at once (its default `prefetch`) and runs them on its
 * workers; a smaller window starves it between acks (a quorum queue drained at prefetch 32 ran at
 * about half the rate of 256), and RabbitMQ's guide on consumer prefetch puts a single consumer's
 * best throughput at 100-300.
 */
const defaultPrefetch = 256;

/** What every queue descriptor holds. */
abstract class QueueBase {
  readonly [sourceMark] = "rabbitmq";
  readonly name: string;
  readonly prefetch: number;
  readonly declare: boolean | undefined;
  abstract readonly type: QueueType;
  readonly #options: RabbitQueueOptions;

  constructor(name: string, options: RabbitQueueOptions) {
    if (typeof name !== "string" || name === "" || name.startsWith("amq.")) {
      throw new RustStreamError(
        "invalid-argument",
        `a queue needs a name of its own (not empty, not amq.*, which the server keeps): got "${String(name)}"`,
      );
    }
    if (Buffer.byteLength(name) > 255) {
      throw new RustStreamError(
        "invalid-argument",
        `queue name "${name.slice(0, 40)}...": AMQP allows 255 bytes`,
      );
    }
    this.name = name;
    this.prefetch = positive("prefetch", options.prefetch, defaultPrefetch);
    if (this.prefetch > 65535) {
      throw new RustStreamError(
        "invalid-argument",
        `prefetch: ${this.prefetch}; basic.qos takes at most 65535`,
      );
    }
    this.declare = options.declare;
    this.#options = options;
  }

  /**
   * The queue as generated docs describe it, in this package's words (the AsyncAPI generator maps
   * them onto the `amqp` bindings): its name and flags, its type, its prefetch, what it is bound
   * to. Facts of the descriptor only: the vhost is the broker's URL's, never seen here.
   */
  get bindings(): Bindings {
    const spec = this.spec;
    const bound = (this.#options.bindings ?? []).map(bindingFacts);
    return {
      amqp: {
        queue: spec.name,
        queueType: this.type,
        durable: spec.durable,
        exclusive: spec.exclusive,
        autoDelete: spec.autoDelete,
        prefetch: this.prefetch,
        ...(bound.length === 0 ? {} : { bindings: bound }),
        ...this.readFacts(),
      },
    };
  }

  /** Where a subscription starts reading, for docs (a stream's offset). */
  protected readFacts(): { readonly [key: string]: JsonValue } {
    return {};
  }

  /** The queue's declaration: what is declared, or checked against the server. */
  get spec(): QueueSpec {
    return {
      name: this.name,
      durable: this.durable,
      exclusive: this.exclusive,
      autoDelete: this.autoDelete,
      arguments: { ...this.#options.arguments, ...this.typeArguments(), "x-queue-type": this.type },
    };
  }

  /** The queue, its bindings, and the exchanges described here that it binds to. */
  topology(): Topology {
    let topology: Topology = { exchanges: [], queues: [this.spec], bindings: [] };
    for (const binding of this.#options.bindings ?? []) {
      const { spec, exchange } = bindingSpec(binding, this.name, "queue");
      topology = mergeTopology(exchange ?? emptyTopology, topology);
      topology = mergeTopology(topology, { exchanges: [], queues: [], bindings: [spec] });
    }
    return topology;
  }

  /** `basic.consume` arguments (a stream's offset). */
  consumeArguments(): Table {
    return {};
  }

  protected get durable(): boolean {
    return this.#options.durable ?? true;
  }
  protected get exclusive(): boolean {
    return false;
  }
  protected get autoDelete(): boolean {
    return false;
  }
  protected typeArguments(): Table {
    return {};
  }
  protected get options(): RabbitQueueOptions {
    return this.#options;
  }
}

/**
 * A classic queue. It does not count deliveries, so a requeue answers `unsupported` and the runtime
 * republishes a counted copy (the retry-count header) instead: a failing message never loops
 * uncounted. Delayed retries go through a wait queue. The runtime writes dead letters.
 */
export class RabbitQueue extends QueueBase implements AddressedSource {
  readonly copies = "addressed" as const;
  readonly type = "classic" as const;

  constructor(name: string, options: RabbitClassicQueueOptions = {}) {
    super(name, options);
    this.spec; // checked now: a mistake shows where the queue is described
  }

  get redeliveryAddress(): string {
    return this.name;
  }

  protected override get exclusive(): boolean {
    return (this.options as RabbitClassicQueueOptions).exclusive ?? false;
  }
  protected override get autoDelete(): boolean {
    return (this.options as RabbitClassicQueueOptions).autoDelete ?? false;
  }
}

/**
 * A quorum queue: the server counts deliveries (`x-delivery-count`), so a requeue is a
 * `basic.reject` with requeue and the attempts come from the server. With a retry declaration the
 * server applies the cap itself (`x-delivery-limit`) and moves what is past it to the dead letter
 * through the default exchange (`x-dead-letter-exchange` ""), declared with the queue.
 */
export class RabbitQuorumQueue extends QueueBase implements BrokerMovesSource {
  readonly copies = "broker" as const;
  readonly type = "quorum" as const;
  readonly retry: RetryDeclaration | undefined;

  constructor(name: string, options: RabbitQuorumQueueOptions = {}) {
    super(name, options);
    if (options.durable === false) {
      throw new RustStreamError(
        "invalid-argument",
        `quorum queue "${name}" is always durable: leave durable out`,
      );
    }
    const retry = options.retry;
    if (
      retry !== undefined &&
      (retry.maxAttempts === undefined) !== (retry.deadLetter === undefined)
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `quorum queue "${name}": retry needs both maxAttempts and deadLetter (a cap with nowhere to go, or a dead letter no cap reaches, is a mistake)`,
      );
    }
    if (retry?.maxAttempts !== undefined) positive("retry.maxAttempts", retry.maxAttempts, 1);
    if (
      retry?.deadLetter !== undefined &&
      (typeof retry.deadLetter !== "string" || retry.deadLetter === "")
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `quorum queue "${name}": retry.deadLetter must name a queue`,
      );
    }
    this.retry = retry;
  }

  declareRetry(declaration: RetryDeclaration): RabbitQuorumQueue {
    return new RabbitQuorumQueue(this.name, { ...this.options, retry: declaration });
  }

  /**
   * The dead-letter queue a retry declaration names, declared with this queue: a quorum queue of
   * no other arguments, what `new RabbitQuorumQueue(deadLetter)` describes.
   */
  override topology(): Topology {
    const own = super.topology();
    const deadLetter = this.retry?.deadLetter;
    if (deadLetter === undefined) return own;
    const dlq = new RabbitQuorumQueue(deadLetter).spec;
    return mergeTopology({ exchanges: [], queues: [dlq], bindings: [] }, own);
  }

  protected override typeArguments(): Table {
    const retry = this.retry;
    if (retry?.maxAttempts === undefined || retry.deadLetter === undefined) return {};
    return {
      // The server moves a message once it came back more than this many times: the cap's last
      // attempt is the one whose return moves it.
      "x-delivery-limit": retry.maxAttempts - 1,
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": retry.deadLetter,
    };
  }
}

/**
 * A stream queue: an append-only log every subscription reads from its own offset. The server
 * cannot requeue on a stream; a retry is a copy appended to it.
 */
export class RabbitStream extends QueueBase implements AddressedSource {
  readonly copies = "addressed" as const;
  readonly type = "stream" as const;
  readonly offset: StreamOffset;

  constructor(name: string, options: RabbitStreamOptions = {}) {
    super(name, options);
    if (options.durable === false) {
      throw new RustStreamError(
        "invalid-argument",
        `stream "${name}" is always durable: leave durable out`,
      );
    }
    const offset = options.offset ?? "next";
    const ok =
      offset === "first" ||
      offset === "last" ||
      offset === "next" ||
      (typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0) ||
      (typeof offset === "bigint" && offset >= 0n) ||
      (offset instanceof Date && !Number.isNaN(offset.getTime()));
    if (!ok) {
      throw new RustStreamError(
        "invalid-argument",
        `stream "${name}": offset ${String(offset)}; give "first", "last", "next", an offset of 0 or more, or a Date`,
      );
    }
    this.offset = offset;
  }

  get redeliveryAddress(): string {
    return this.name;
  }

  protected override readFacts(): { readonly [key: string]: JsonValue } {
    const o = this.offset;
    return {
      offset: o instanceof Date ? o.toISOString() : typeof o === "bigint" ? o.toString() : o,
    };
  }

  override consumeArguments(): Table {
    return streamOffsetArgument(this.offset);
  }
}

/** Every queue descriptor this broker takes. */
export type RabbitSource = RabbitQueue | RabbitQuorumQueue | RabbitStream;
