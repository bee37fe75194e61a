import { RustStreamError } from "@ruststream/core";
import { LinkStates } from "@ruststream/core/broker";
import amqp, { type ChannelModel } from "amqplib";
import type {
  ConsumeRequest,
  Link,
  LinkConsumer,
  LinkDelivery,
  PublishRequest,
  StreamBounds,
} from "../link.js";
import { loginOf, type RabbitAuthMechanism } from "../login.js";
import { directReplyTo } from "../names.js";
import { emptyTopology, mergeTopology, type Topology } from "../topology/topology.js";
import { ChannelSlot, type ClosableChannel } from "./channelSlot.js";
import { ConnectRefused, connectRefusal } from "./connectRefusal.js";
import { ConsumerChannel } from "./consumerChannel.js";
import { guardFrames } from "./frameGuard.js";
import { PublishChannel } from "./publishChannel.js";
import { queueCounts } from "./queueCounts.js";
import { refusalOf } from "./serverError.js";
import { StreamEnds, streamBounds } from "./streamBounds.js";
import { checkTopology, declareTopology } from "./topologyCheck.js";
import { TxChannel } from "./txChannel.js";

export interface AmqpLinkOptions {
  /** `amqp://` or `amqps://`, credentials and vhost in it: one node's, or a cluster's nodes'. */
  readonly urls: readonly string[];
  /** How the client logs in: the url's user and password, or the TLS client certificate. */
  readonly authMechanism: RabbitAuthMechanism;
  /** amqplib's socket options: TLS settings, the connect timeout. */
  readonly socket: Readonly<Record<string, unknown>>;
  /** How long a publish (or a declaration) waits for a lost connection to come back. */
  readonly waitForConnectionMs: number;
  /** The reconnect backoff: from `initialMs`, doubling, up to `maxMs`. */
  readonly reconnect: { readonly initialMs: number; readonly maxMs: number };
  /** Where the server is, for messages: never the credentials. */
  readonly where: string;
}

/**
 * Our connection to RabbitMQ on amqplib. amqplib's own recovery is not used: this link reconnects
 * with backoff, declares again what it declared, reopens the publishing channel (with its direct
 * reply-to consumer) and every consumer's channel, and reports each change through `states`. While
 * the connection is down, a publish waits up to `waitForConnectionMs` for it, then fails naming why.
 * Transactions go on a channel of their own (AMQP's tx mode excludes confirms), one after another.
 */
export class AmqpLink implements Link {
  readonly states = new LinkStates();
  readonly replyTo = directReplyTo;
  readonly #options: AmqpLinkOptions;
  readonly #consumers = new Set<ConsumerChannel>();
  readonly #streamEnds = new StreamEnds();
  #model: ChannelModel | undefined;
  readonly #publish = new ChannelSlot((model) => PublishChannel.open(model, this.#onReply));
  readonly #tx = new ChannelSlot(TxChannel.open);
  /** The last transaction's commit: the next one starts after it (one open transaction per channel). */
  #commits: Promise<unknown> = Promise.resolve();
  #declared: Topology = emptyTopology;
  #onReply: ((reply: LinkDelivery) => void) | undefined;
  /** Those waiting for the connection to come back. */
  #waiting = new Set<() => void>();
  #down: string | undefined;
  #closed = false;
  #reconnecting = false;
  /** The index in `urls` of the node this link is (or was last) connected to. */
  #node = 0;

  private constructor(options: AmqpLinkOptions) {
    this.#options = options;
  }

  /** Connects once; a server that refuses or cannot be reached is an error here, not a retry. */
  static async open(options: AmqpLinkOptions): Promise<AmqpLink> {
    const link = new AmqpLink(options);
    try {
      const { model, node } = await connectAny(options, 0);
      link.#node = node;
      link.#adopt(model);
    } catch (error) {
      throw new RustStreamError(
        "broker-failure",
        `cannot connect to RabbitMQ at ${options.where}: ${error instanceof ConnectRefused ? error.message : refusalOf(error).text}`,
        { cause: error },
      );
    }
    return link;
  }

  async ensure(topology: Topology, declare: boolean): Promise<void> {
    const model = await this.#connected("declaring the topology");
    if (declare) {
      await declareTopology(model, topology);
      this.#declared = mergeTopology(this.#declared, topology);
    } else {
      await checkTopology(model, topology);
    }
  }

  async consume(request: ConsumeRequest): Promise<LinkConsumer> {
    const model = await this.#connected(`consuming queue "${request.queue}"`);
    const consumer = new ConsumerChannel(
      request,
      (c) => this.#consumers.delete(c),
      this.#streamEnds,
    );
    try {
      await consumer.attach(model, (error) => this.#reattach(consumer, error));
    } catch (error) {
      const refusal = refusalOf(error);
      throw new RustStreamError(
        refusal.code === 404 || refusal.code === 405 || refusal.code === 406
          ? "invalid-argument"
          : "broker-failure",
        `cannot consume queue "${request.queue}": ${refusal.text}`,
        { cause: error },
      );
    }
    this.#consumers.add(consumer);
    return consumer;
  }

  async streamBounds(queue: string): Promise<StreamBounds> {
    const model = await this.#connected(`reading the offsets of stream "${queue}"`);
    return streamBounds(model, queue, this.#streamEnds.next(queue));
  }

  async queueCounts(queues: readonly string[]): Promise<readonly number[]> {
    const model = await this.#connected(`counting the messages of queue "${queues[0]}"`);
    return queueCounts(model, queues);
  }

  publish(request: PublishRequest): Promise<void> {
    // Connected, the publishing channel open: straight to it, no promise before the confirm's own.
    const held = this.#closed || this.#model === undefined ? undefined : this.#publish.held();
    return held === undefined ? this.#publishOnceOpen(request) : held.publish(request);
  }

  async #publishOnceOpen(request: PublishRequest): Promise<void> {
    const what = `publishing to exchange "${request.exchange}" with routing key "${request.routingKey}"`;
    return (await this.#channel(this.#publish, what)).publish(request);
  }

  commit(requests: readonly PublishRequest[]): Promise<void> {
    const run = this.#commits.then(async () =>
      (await this.#channel(this.#tx, "committing a transaction")).commit(requests),
    );
    this.#commits = run.catch(() => {});
    return run;
  }

  publishRequest(request: PublishRequest): Promise<void> {
    return this.publish(request);
  }

  onReply(listener: (reply: LinkDelivery) => void): void {
    this.#onReply = listener;
    // A channel opened before the first request has no reply consumer: the next one will.
    void this.#publish.close();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wakeWaiting();
    await Promise.allSettled([...this.#consumers].map((c) => c.cancel()));
    await Promise.all([this.#publish.close(), this.#tx.close()]);
    await this.#model?.close().catch(() => {});
  }

  /** The slot's channel on the live connection, opening another when it closed under us. */
  async #channel<T extends ClosableChannel>(slot: ChannelSlot<T>, what: string): Promise<T> {
    for (;;) {
      const model = await this.#connected(what);
      try {
        const channel = await slot.on(model);
        if (channel !== undefined) return channel;
      } catch (error) {
        if (this.#model === model) throw refusalError("opening a channel", error);
      }
      // Closed under us (a reconnect, or the server closed it): open another.
    }
  }

  /** The live connection, or waits for it up to the bound, or fails saying why it is down. */
  async #connected(what: string): Promise<ChannelModel> {
    const deadline = Date.now() + this.#options.waitForConnectionMs;
    for (;;) {
      if (this.#closed) throw new RustStreamError("closed", `${what}: the connection is closed`);
      if (this.#model !== undefined) return this.#model;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new RustStreamError(
          "broker-failure",
          `${what}: the connection to RabbitMQ at ${this.#options.where} is down (${this.#down ?? "reconnecting"}) and did not come back within ${this.#options.waitForConnectionMs} ms`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, left);
        const waiter = () => wake();
        function wake() {
          clearTimeout(timer);
          resolve();
        }
        this.#waiting.add(waiter);
        timer.unref?.();
      });
    }
  }

  #wakeWaiting(): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const wake of waiting) wake();
  }

  #adopt(model: ChannelModel): void {
    this.#model = model;
    this.#down = undefined;
    model.on("error", () => {});
    model.on("close", (error?: Error) => {
      if (this.#model !== model) return;
      this.#model = undefined;
      this.#publish.forget();
      this.#tx.forget();
      if (this.#closed) return;
      this.#lost(error === undefined ? "the server closed the connection" : refusalOf(error).text);
    });
  }

  #lost(reason: string): void {
    this.#down = reason;
    this.states.report(this, { state: "reconnecting", reason });
    if (this.#reconnecting) return;
    this.#reconnecting = true;
    void this.#reconnect().finally(() => {
      this.#reconnecting = false;
    });
  }

  async #reconnect(): Promise<void> {
    let delay = this.#options.reconnect.initialMs;
    while (!this.#closed) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (this.#closed) return;
      let model: ChannelModel;
      try {
        // From the node after the one lost: in a cluster, the lost one is likely down still.
        const connected = await connectAny(this.#options, this.#node + 1);
        model = connected.model;
        this.#node = connected.node;
      } catch (error) {
        const reason = error instanceof ConnectRefused ? error.message : refusalOf(error).text;
        this.#down = reason;
        // Credentials or a vhost retrying does not fix: the service needs a fix, not patience.
        const refused = error instanceof ConnectRefused && error.login;
        this.states.report(this, { state: refused ? "lost" : "reconnecting", reason });
        delay = Math.min(delay * 2, this.#options.reconnect.maxMs);
        continue;
      }
      if (this.#closed) {
        await model.close().catch(() => {});
        return;
      }
      try {
        await declareTopology(model, this.#declared);
        for (const consumer of this.#consumers) {
          await consumer.attach(model, (error) => this.#reattach(consumer, error));
        }
      } catch (error) {
        this.#down = refusalOf(error).text;
        await model.close().catch(() => {});
        delay = Math.min(delay * 2, this.#options.reconnect.maxMs);
        continue;
      }
      this.#adopt(model);
      this.states.report(this, { state: "connected" });
      this.#wakeWaiting();
      return;
    }
  }

  /** A consumer's channel the server closed while the connection lives: consume again, once. */
  #reattach(consumer: ConsumerChannel, _error: Error): void {
    const model = this.#model;
    if (model === undefined || consumer.cancelled) return;
    setTimeout(() => {
      if (this.#model !== model || consumer.cancelled) return;
      void consumer.attach(model, (e) => this.#reattach(consumer, e)).catch(() => {});
    }, this.#options.reconnect.initialMs).unref?.();
  }
}

/**
 * A connection to the first node that answers, trying each URL once in order from `first` (wrapping
 * around); throws the last node's refusal ({@link ConnectRefused}) when none does.
 */
async function connectAny(
  options: AmqpLinkOptions,
  first: number,
): Promise<{ model: ChannelModel; node: number }> {
  let refusal: unknown;
  for (let k = 0; k < options.urls.length; k++) {
    const node = (first + k) % options.urls.length;
    const url = options.urls[node] as string;
    try {
      return { model: await connectGuarded(url, options), node };
    } catch (error) {
      refusal = connectRefusal(error, url, options.authMechanism);
    }
  }
  throw refusal;
}

/** A connection whose content headers are checked before amqplib decodes them (frameGuard.ts). */
async function connectGuarded(url: string, options: AmqpLinkOptions): Promise<ChannelModel> {
  const model = await amqp.connect(url, {
    ...options.socket,
    credentials: credentialsFor(url, options.authMechanism),
  });
  try {
    guardFrames(model);
  } catch (error) {
    await model.close().catch(() => {});
    throw error;
  }
  return model;
}

/**
 * What the client logs in with. The user and password are decoded here: amqplib reads them from
 * the url with `unescape`, which takes the UTF-8 of "é" (`%C3%A9`) for two Latin-1 characters.
 */
function credentialsFor(url: string, mechanism: RabbitAuthMechanism) {
  if (mechanism === "EXTERNAL") return amqp.credentials.external();
  const { user, password } = loginOf(new URL(url));
  return amqp.credentials.plain(user, password);
}

function refusalError(what: string, error: unknown): RustStreamError {
  return new RustStreamError("broker-failure", `${what}: ${refusalOf(error).text}`, {
    cause: error,
  });
}
