import {
  type BacklogCounts,
  type ClockTimer,
  RustStreamError,
  type SeekableSubscription,
} from "@ruststream/core";
import {
  Arrivals,
  backlogMark,
  type HostedSubscription,
  PullSubscription,
  type ReportsBacklog,
  type ReportsWaits,
  seekMark,
  waitsMark,
} from "@ruststream/core/broker";
import {
  type ConsumerLink,
  type ConsumerSpec,
  PullRefused,
  type PullRequest,
  type PullSink,
  type Stored,
} from "../client/link.js";
import { consumerGone, consumerSource } from "../consumerGone.js";
import type { NatsHost } from "../host.js";
import {
  isJetStreamSeekPosition,
  JetStreamPosition,
  type JetStreamSeekPosition,
  parseJetStreamPosition,
} from "../position.js";
import { pushSeekRefused } from "../push.js";
import type { JetStreamSubject } from "../sources.js";
import { JetStreamDelivery, type JetStreamDeliveryOwner } from "./jetStreamDelivery.js";

/**
 * What a pull consumer's subscription reads of its descriptor: a JetStreamSubject's, a watch's, or
 * an OrderedJetStreamSubject's (`ordered`: its consumer takes no acks, so it gets no beat).
 */
export type PullSource = Pick<
  JetStreamSubject,
  "name" | "stream" | "durable" | "subjects" | "settings" | "commit"
> & { readonly ordered?: true };

/**
 * The delivery a message becomes, or `undefined` for one the handler is not to see (a KV delete
 * the watch does not hand over): acknowledged at once.
 */
export type DeliveryOf = (
  owner: JetStreamDeliveryOwner,
  message: Stored,
  now: number,
) => JetStreamDelivery | undefined;

const jetStreamDelivery: DeliveryOf = (owner, message, now) =>
  new JetStreamDelivery(owner, message, now);

/** The wait before pulling again after a pull request failed (a server away, a consumer gone). */
const RETRY_PULL_MS = 1000;
/**
 * The longest wait between two tries of pulls the server refused (the account's permissions), or
 * of a consumer gone from the server that the subscription cannot create again: the wait doubles
 * from RETRY_PULL_MS with each try in a row, up to this.
 */
const MAX_RETRY_PULL_MS = 60_000;

/** The wait before the `tries`-th try in a row (1 or more) of something a retry alone may not fix. */
const backoff = (tries: number) => Math.min(RETRY_PULL_MS * 2 ** (tries - 1), MAX_RETRY_PULL_MS);

/**
 * A JetStream pull consumer's subscription. Its pulls ask the server for up to `fetchSize`
 * messages at once and ask again ahead of need as they arrive, as the client's consume() does,
 * while fewer than `fetchSize` wait here; what arrives waits in order until pulled. Every delivery
 * the server handed over and that is not settled yet (waiting here, or in a handler) gets a
 * `working()` beat once half of `ackWaitMs` passed since the server last heard of it, so the
 * server never delivers it again while this process holds it.
 */
export class JetStreamSubscription
  extends PullSubscription<JetStreamDelivery>
  implements
    JetStreamDeliveryOwner,
    HostedSubscription,
    SeekableSubscription<JetStreamDelivery>,
    ReportsBacklog,
    ReportsWaits
{
  /**
   * Set by the constructor, except for a push consumer bound with `push: true`: it is bound to as
   * the server has it, never made again at a position, so its subscription does not carry the
   * mark (its `seek()` is refused with `unsupported`). A declared one is made again, as a pull
   * consumer is.
   */
  declare readonly [seekMark]: true;
  /**
   * Set by the constructor for a subject's consumer (`counted`), not for a KV or object watch's:
   * a watch follows a bucket's changes, where a count of what it has not read is no queue of work.
   */
  declare readonly [backlogMark]: true;
  declare readonly [waitsMark]: true;
  readonly name: string;
  readonly confirmAcks: boolean;
  readonly #host: NatsHost;
  readonly #source: PullSource;
  readonly #deliveryOf: DeliveryOf;
  #consumer: ConsumerLink;
  readonly #queue = new Arrivals<JetStreamDelivery>();
  /** Handed over by the server and not settled: what the beat keeps alive. */
  readonly #held = new Set<JetStreamDelivery>();
  /** Of those, what `pull` handed out: still valid after a close, until settled. */
  readonly #handedOut = new Set<JetStreamDelivery>();
  #request: PullRequest | undefined;
  /** Resolves the pulls' wait for room (sink's `room()`), when they wait. */
  #roomFreed: (() => void) | undefined;
  #retry: ClockTimer | undefined;
  #beat: ClockTimer | undefined;
  /** Bumped by a seek: messages of a pull made before it are the old consumer's. */
  #epoch = 0;
  #letGo = false;
  /** The pulls' stop once it began, awaited by every path that lets go. */
  #stopping: Promise<void> | undefined;
  /** The consumer is closed and the connection let go of this subscription. */
  #released = false;
  /** A seek is replacing the consumer: no pulls until it has. */
  #seeking = false;
  /** The pulls the server refused in a row (the account's permissions); 0 once it takes them. */
  #refusals = 0;
  /** A push consumer's heartbeats were missed, and none came since. */
  #silent = false;
  /**
   * The consumer is gone from the server and not bound or created again yet: the tries so far, and
   * the name its failure was reported under (its recovery's).
   */
  #gone: { tries: number; readonly source: string } | undefined;
  /** The highest stream sequence received, where an ephemeral consumer created again starts after. */
  #lastSequence: bigint | undefined;
  #waited: ((waitedMs: number) => void) | undefined;

  private constructor(
    host: NatsHost,
    source: PullSource,
    consumer: ConsumerLink,
    deliveryOf: DeliveryOf,
    counted: boolean,
  ) {
    super();
    this.#host = host;
    this.#source = source;
    this.#deliveryOf = deliveryOf;
    this.#consumer = consumer;
    this.name = source.name;
    this.confirmAcks = source.commit === "tracked";
    if (source.settings.push !== "bind") (this as { [seekMark]: true })[seekMark] = true;
    if (counted) {
      const marked = this as { [backlogMark]: true; [waitsMark]: true };
      marked[backlogMark] = true;
      marked[waitsMark] = true;
    }
  }

  /** Checks the stream (declaring it when asked), creates the consumer, and subscribes. */
  static async open(host: NatsHost, source: JetStreamSubject): Promise<JetStreamSubscription> {
    await host.link.ensureStream(source.stream, source.subjects, source.declare);
    return JetStreamSubscription.on(host, source, jetStreamDelivery, true);
  }

  /**
   * Creates the consumer on a stream that exists, and subscribes; `deliveryOf` makes its
   * deliveries. `counted`: it answers its backlog and reports its waits (a subject's consumer).
   */
  static async on(
    host: NatsHost,
    source: PullSource,
    deliveryOf: DeliveryOf,
    counted: boolean,
  ): Promise<JetStreamSubscription> {
    const consumer = await host.link.consumer(specOf(source));
    return new JetStreamSubscription(host, source, consumer, deliveryOf, counted);
  }

  /** The consumer's name at the server (the durable name, or the server's for an ephemeral). */
  get consumerName(): string {
    return this.#consumer.name;
  }

  /**
   * The consumer's counts, from one consumer info request: `ready` its `num_pending` (messages its
   * filter matches not delivered yet), `leased` its `num_ack_pending` (delivered, not acknowledged:
   * a `nak` with a delay stays there until delivered again); an ordered consumer takes no acks, so
   * `ready` only. Rejects at once while the connection is away, and when the consumer is gone.
   */
  async backlog(): Promise<BacklogCounts> {
    const counts = await this.#consumer.counts();
    if (this.#source.ordered === true) return { ready: counts.undelivered };
    return { ready: counts.undelivered, leased: counts.unacknowledged };
  }

  /**
   * Hears each message delivered for the first time, with the time since its stream stored it
   * (the server's timestamp in its delivery info: no request more). A redelivery is not heard: its
   * info says when it was stored, not when its `nak` delay or its ack wait ended.
   */
  onWaited(listener: (waitedMs: number) => void): void {
    this.#waited = listener;
  }

  protected async pull(max: number): Promise<readonly JetStreamDelivery[]> {
    this.#pump();
    while (this.#queue.length === 0) {
      await this.arrivalOn(this.#queue);
      if (this.closed) return [];
    }
    const taken = this.#queue.take(max);
    for (const delivery of taken) this.#handedOut.add(delivery);
    this.#freeRoom();
    return taken;
  }

  async seek(position: JetStreamSeekPosition): Promise<void> {
    this.seekTo(position, isJetStreamSeekPosition, "a JetStream position");
    if (this.#source.settings.push === "bind")
      throw pushSeekRefused(this.#source.stream, this.#consumer.name);
    const startAt =
      position instanceof JetStreamPosition
        ? { sequence: await this.#checkSequence(position) }
        : { time: position.time };
    this.#epoch++;
    this.#seeking = true;
    const request = this.#stopPulls();
    try {
      // What the client had read ahead goes back (the old consumer's) before anything else.
      await request?.done.catch(() => undefined);
      // What waits here came from the old consumer: handed back, so nothing stays held for it.
      const waiting = this.#queue.take(this.#queue.length);
      for (const delivery of waiting) this.#held.delete(delivery);
      const old = this.#consumer;
      await old.giveBack(waiting.map((delivery) => delivery.message));
      if (this.#source.durable === undefined) await old.close();
      this.#consumer = await this.#host.link.consumer({
        ...specOf(this.#source),
        startAt,
        replace: true,
      });
    } finally {
      this.#seeking = false;
    }
    this.#pump();
  }

  parsePosition(text: string): JetStreamSeekPosition {
    return parseJetStreamPosition(text);
  }

  /**
   * Stops pulling and gives back at once what was read ahead and never handed out. What was handed
   * out stays valid (an app's graceful stop closes, then drains its handlers): the subscription
   * stays with its connection, its beat running, until the last of it settles, and a shutdown
   * before then gives back what is left.
   */
  async close(): Promise<void> {
    if (!this.markClosed()) return;
    await this.#stopPulling();
    if (this.#released) return;
    const readAhead = [...this.#held].filter((delivery) => !this.#handedOut.has(delivery));
    for (const delivery of readAhead) this.#held.delete(delivery);
    this.#queue.clear();
    await this.#consumer.giveBack(readAhead.map((delivery) => delivery.message));
    if (this.#held.size === 0) await this.#release();
  }

  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#queue.wake();
  }

  /** Gives back every delivery held (waiting here, or handed out and not settled): `nak`, at once. */
  async surrender(): Promise<number> {
    return this.#letGoOf();
  }

  // JetStreamDeliveryOwner

  assertOpen(): void {
    this.#host.assertOpen();
  }

  settled(delivery: JetStreamDelivery): void {
    this.#held.delete(delivery);
    this.#handedOut.delete(delivery);
    if (this.#held.size !== 0) return;
    this.#stopBeat();
    // The last delivery a closed subscription handed out: let go now. A failure here is the
    // connection's, which its shutdown reports.
    if (this.closed && this.#letGo) void this.#release().catch(() => undefined);
  }

  async #letGoOf(): Promise<number> {
    await this.#stopPulling();
    if (this.#released) return 0;
    this.#stopBeat();
    const held = [...this.#held];
    this.#held.clear();
    this.#handedOut.clear();
    this.#queue.clear();
    await this.#consumer.giveBack(held.map((delivery) => delivery.message));
    await this.#release();
    return held.length;
  }

  /** Stops the pulls once, for every path that lets go; each waits for the same stop. */
  #stopPulling(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#letGo = true;
      const request = this.#stopPulls();
      this.#retry?.cancel();
      this.#host.link.states.forget(this);
      this.#endGone();
      // What the client had read ahead arrives before the stopped pulls end: held, so given back
      // with the rest, in stream order.
      await request?.done.catch(() => undefined);
    })();
    return this.#stopping;
  }

  /** Lets go of the connection and closes the consumer, once. */
  async #release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#stopBeat();
    this.#host.forget(this);
    // The acks and the rest settled before now, and the naks given back, reach the server before
    // the subscription reports it let go (and before an ephemeral consumer is deleted).
    await this.#host.link.settlementsWritten();
    await this.#consumer.close();
  }

  /** Starts the pulls unless they run, wait to run again after a failure, or it closed. */
  #pump(): void {
    if (
      this.#request !== undefined ||
      this.#retry !== undefined ||
      this.#seeking ||
      this.closed ||
      this.#letGo
    )
      return;
    const epoch = this.#epoch;
    const sink: PullSink = {
      arrived: (message) => this.#arrived(message, epoch),
      room: () => this.#room(),
      accepted: () => this.#accepted(),
      missed: (count) => this.#missed(count),
    };
    const request = this.#consumer.pull(
      this.#source.settings.fetchSize,
      this.#source.settings.pullExpiresMs,
      sink,
    );
    this.#request = request;
    const ended = (error?: unknown) => {
      if (this.#request !== request) return;
      this.#request = undefined;
      // Not stopped here: the server away, the consumer gone, the connection closing, or the
      // pulls refused. Pull again later.
      if (this.closed || this.#letGo) return;
      this.#retryIn(this.#retryAfter(error));
    };
    request.done.then(ended, ended);
  }

  /**
   * Recovers the consumer after `wait` ms, then pulls again; while it is gone and not there again
   * (a push consumer bound with `push: true`, or one the server did not create), tries again
   * later, less and less often, without pulling: nothing comes from a consumer the server lacks.
   */
  #retryIn(wait: number): void {
    this.#retry = this.#host.clock.setTimer(wait, () => {
      void this.#recover().finally(() => {
        this.#retry = undefined;
        if (this.closed || this.#letGo) return;
        if (this.#gone === undefined) this.#pump();
        else this.#retryIn(backoff(this.#gone.tries));
      });
    });
  }

  /** Stops the pulls (answering them), and lets them past a wait for room so they end. */
  #stopPulls(): PullRequest | undefined {
    const request = this.#request;
    this.#request = undefined;
    request?.stop();
    this.#freeRoom();
    return request;
  }

  /** The sink's `room()`: while `fetchSize` deliveries wait here, the pulls wait. */
  #room(): Promise<void> | undefined {
    if (this.#queue.length < this.#source.settings.fetchSize || this.closed || this.#letGo)
      return undefined;
    return new Promise<void>((resolve) => {
      this.#roomFreed = resolve;
    });
  }

  /**
   * How long to wait before pulling again after `error`. Refused pulls (the account's permissions)
   * are tried again less and less often, and the connection's state is `lost` with the server's
   * reason until the server takes them: a retry does not fix a permission, an operator does.
   */
  #retryAfter(error: unknown): number {
    if (!(error instanceof PullRefused)) return RETRY_PULL_MS;
    this.#refusals++;
    const wait = backoff(this.#refusals);
    this.#host.link.states.report(this, {
      state: "lost",
      reason: `${error.message}; refused ${this.#refusals} time(s) in a row, asked again in ${wait / 1000} s`,
    });
    return wait;
  }

  /** The server takes the pulls (a message or a heartbeat came): refused no longer. */
  #accepted(): void {
    if (this.#refusals === 0 && !this.#silent) return;
    this.#refusals = 0;
    this.#silent = false;
    this.#host.link.states.report(this, { state: "connected" });
  }

  /**
   * A push consumer's server missed its heartbeats: nothing reaches this app (the consumer
   * deleted or edited, its deliver subject taken away, the server cut off), said as the refused
   * pulls are, until a heartbeat or a message comes again.
   */
  #missed(count: number): void {
    this.#silent = true;
    this.#host.link.states.report(this, {
      state: "lost",
      reason: `the push consumer "${this.#consumer.name}" on the JetStream stream "${this.#source.stream}" missed ${count} heartbeat(s): the server pushes nothing to this app (check nats consumer info ${this.#source.stream} ${this.#consumer.name})`,
    });
    // A consumer gone is usually heard of through the server's advisory; an account that may not
    // listen to it hears of it here: its pushes are stopped, so the consumer is looked for again.
    const request = this.#request;
    void this.#consumer.exists().then(
      (present) => {
        if (!present && this.#request === request) request?.stop();
      },
      () => undefined,
    );
  }

  #freeRoom(): void {
    const free = this.#roomFreed;
    this.#roomFreed = undefined;
    free?.();
  }

  /**
   * After a failed pull: a consumer the server no longer has (deleted, or an ephemeral one past
   * its inactive threshold while the server was away) is reported (the app's background failure,
   * under `nats:<stream>/<consumer>`) and created again, an ephemeral one after the last message
   * this subscription received, so nothing it read comes twice and nothing after it is skipped;
   * once created, its recovery is reported. A push consumer bound with `push: true` is its owner's
   * to create: it is asked for again, less and less often, and bound once it is back. A server
   * still away changes nothing: the next pull fails and comes here again.
   */
  async #recover(): Promise<void> {
    if (this.closed) return;
    const present = await this.#consumer.exists().catch(() => undefined);
    // Let go meanwhile: nothing more to report or create.
    if (this.#letGo) return;
    if (present === undefined || (present && this.#gone === undefined)) return;
    const bound = this.#source.settings.push === "bind";
    if (!present && this.#gone === undefined) {
      const source = consumerSource(this.#source.stream, this.#consumer.name);
      this.#gone = { tries: 0, source };
      this.#host.background.failed(
        source,
        consumerGone(this.#source.stream, this.#consumer.name, bound, backoff(1)),
      );
    }
    const gone = this.#gone;
    if (gone === undefined) return;
    if (!present && bound) {
      gone.tries++;
      return;
    }
    const startAt =
      this.#source.durable === undefined && this.#lastSequence !== undefined
        ? { sequence: this.#lastSequence + 1n }
        : undefined;
    let made: ConsumerLink;
    try {
      made = await this.#host.link.consumer({
        ...specOf(this.#source),
        ...(startAt === undefined ? {} : { startAt }),
      });
    } catch (error) {
      // Let go meanwhile: its failure ended with it.
      if (this.#letGo) return;
      // Bound to again but refused (made again as another kind, or with other settings), or not
      // created (the server away): said, and tried again later.
      gone.tries++;
      this.#host.background.failed(gone.source, error);
      return;
    }
    if (this.#letGo) {
      // Let go while it was made: closed (an ephemeral one deleted), not left to its threshold.
      await made.close().catch(() => undefined);
      return;
    }
    this.#consumer = made;
    this.#endGone();
  }

  /**
   * Ends the failure of a consumer gone, if it is: made again, or the subscription let go of it
   * (closed, or its held deliveries surrendered). A source that no longer exists fails no more,
   * so its recovery is reported too: else the app's health stays not ready, naming it, until the
   * app stops.
   */
  #endGone(): void {
    const gone = this.#gone;
    if (gone === undefined) return;
    this.#gone = undefined;
    this.#host.background.recovered(gone.source);
  }

  #arrived(message: Stored, epoch: number): void {
    if (epoch !== this.#epoch) {
      // The old consumer's, after a seek: back to the server at once.
      message.nak();
      return;
    }
    if (this.#refusals !== 0 || this.#silent) this.#accepted();
    if (this.#lastSequence === undefined || message.streamSequence > this.#lastSequence)
      this.#lastSequence = message.streamSequence;
    const delivery = this.#deliveryOf(this, message, this.#host.clock.now());
    if (delivery === undefined) {
      message.ack();
      return;
    }
    this.#held.add(delivery);
    if (this.#letGo) return;
    if (this.closed) {
      // Arriving after the close, before the letting go: back to the server at once.
      this.#held.delete(delivery);
      message.nak();
      return;
    }
    if (this.#source.ordered !== true) this.#startBeat();
    if (message.deliveryCount === 1)
      this.#waited?.(Math.max(0, this.#host.clock.now() - message.storedAt));
    this.#queue.push(delivery);
  }

  #startBeat(): void {
    if (this.#beat !== undefined) return;
    const every = Math.max(1, Math.floor(this.#source.settings.ackWaitMs / 4));
    const tick = () => {
      const now = this.#host.clock.now();
      const half = this.#source.settings.ackWaitMs / 2;
      for (const delivery of this.#held) {
        if (now - delivery.lastBeat >= half) {
          delivery.message.working();
          delivery.lastBeat = now;
        }
      }
      this.#beat = this.#held.size === 0 ? undefined : this.#host.clock.setTimer(every, tick);
    };
    this.#beat = this.#host.clock.setTimer(every, tick);
  }

  #stopBeat(): void {
    this.#beat?.cancel();
    this.#beat = undefined;
  }

  /** A sequence the stream still holds, or the next one it will write; else `unknown-position`. */
  async #checkSequence(position: JetStreamPosition): Promise<bigint> {
    if (position.stream !== this.#source.stream) {
      throw new RustStreamError(
        "foreign-value",
        `seek() got a position in the stream "${position.stream}", and this subscription reads "${this.#source.stream}"`,
      );
    }
    const { first, last } = await this.#host.link.streamBounds(this.#source.stream);
    if (position.sequence < first || position.sequence > last + 1n) {
      throw new RustStreamError(
        "unknown-position",
        `the stream "${this.#source.stream}" holds sequences ${first} to ${last}: ${position.sequence} was evicted or never written`,
      );
    }
    return position.sequence;
  }
}

/** The consumer a subscription asks for. */
function specOf(source: PullSource): ConsumerSpec {
  return {
    stream: source.stream,
    durable: source.durable,
    subjects: source.subjects,
    settings: source.settings,
    ...(source.ordered === true ? { ordered: true } : {}),
  };
}
