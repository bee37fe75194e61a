import {
  type BacklogCounts,
  RustStreamError,
  type SeekableSubscription,
  type SettleResult,
} from "@ruststream/core";
import {
  backlogMark,
  type Coordinator,
  type HostedSubscription,
  PullSubscription,
  type ReportsBacklog,
  type SubscriptionHost,
  seekMark,
} from "@ruststream/core/broker";
import { FilePosition, isFilePosition } from "../position.js";
import type { FileStream } from "../sources.js";
import { fileError, wrapFileError } from "../wire/format/errors.js";
import type { DecodedMessage } from "../wire/format/types.js";
import { FileConsumer, type ReadFrom } from "../wire/io/consumer.js";
import { streamTip } from "../wire/io/streamTip.js";
import { ConsumerPosition, type StoredPosition } from "./consumerPosition.js";
import { copiesInFile } from "./copiesInFile.js";
import type { DeliveryOrigin } from "./copyOrigin.js";
import { Sidecar, sidecarPath } from "./sidecar.js";
import { type DeliveryOwner, FileDelivery } from "./streamDelivery.js";

/** What a subscription needs from its connection, beside core's. */
export interface FileHost extends SubscriptionHost {
  /** The file read (a private temporary one in process). */
  readonly path: string;
  readonly coordinator: Coordinator | undefined;
  /** A frame declaring a larger payload stops the reader instead of being waited for. */
  readonly maxMessageBytes: number;
}

interface Named {
  readonly consumer: string;
  readonly sidecar: Sidecar;
  /** Reset by a seek: deliveries handed out before it no longer move the position. */
  readonly position: ConsumerPosition;
}

interface Requeued {
  readonly message: DecodedMessage;
  readonly counted: boolean;
  /** The deliveries it had so far: the next one counts one more. */
  readonly redeliveryCount: number;
}

/** Named consumers open in this process, by sidecar path: one subscription each. */
const openConsumers = new Set<string>();

function failure(error: unknown, name: string): RustStreamError {
  const message = error instanceof Error ? error.message : String(error);
  return wrapFileError("broker-failure", `reading "${name}" failed: ${message}`, error);
}

/**
 * A stored position past the stream's last message in the file: the file was cut (or replaced)
 * below what this consumer settled. The file's writer goes on from the last message the file holds,
 * reusing the sequence numbers after it, so resuming at the stored `next` would skip every message
 * appended from now on until the sequence caught up; resuming after the last message the file
 * holds delivers them. What the cut took is gone either way.
 */
function withinFile(stored: StoredPosition, tip: bigint): StoredPosition {
  if (stored.next <= tip + 1n) return stored;
  return { next: tip + 1n, open: stored.open.filter((seq) => seq <= tip) };
}

/**
 * One stream key of the file, read in order. Unnamed, it keeps no position: every settle answers
 * `unsupported`. Named (a consumer name on the descriptor), it is `tracked`: ack and drop settle,
 * a requeue comes back ahead of newer messages, and the stored position is the highest settled
 * message with the unsettled ones before it listed (consumerPosition.ts), so a restart delivers
 * again only those, and none whose retry copy or dead letter this consumer already wrote.
 */
export class FileSubscription
  extends PullSubscription<FileDelivery>
  implements SeekableSubscription<FileDelivery>, ReportsBacklog, DeliveryOwner, HostedSubscription
{
  readonly [seekMark] = true as const;
  /** Set by the constructor for a named consumer, which keeps a position to count from. */
  declare readonly [backlogMark]: true;
  readonly name: string;
  /** The consumer name, for a named (durable) subscription: its group, in the conventions' terms. */
  readonly group: string | undefined;
  readonly #host: FileHost;
  readonly #consumer: FileConsumer;
  readonly #named: Named | undefined;
  readonly #requeued: Requeued[] = [];
  /** File offsets of appends counted for the coordinator and not yet handed out. */
  readonly #counted = new Set<number>();
  /**
   * Handed out in this generation and not settled for good: the counted ones (released for the
   * coordinator), and a named consumer's (what a shutdown hands back). An unnamed consumer's that
   * count for nobody are not kept: nothing goes back for them.
   */
  readonly #out = new Set<FileDelivery>();
  #fetch: Promise<DecodedMessage | undefined> | undefined;
  #wakeRequeue: (() => void) | undefined;
  #generation = 0;

  private constructor(
    host: FileHost,
    name: string,
    consumer: FileConsumer,
    named: Named | undefined,
    group: string | undefined,
  ) {
    super();
    this.#host = host;
    this.name = name;
    this.group = group;
    this.#consumer = consumer;
    this.#named = named;
    if (named !== undefined) (this as { [backlogMark]: true })[backlogMark] = true;
  }

  /**
   * A named consumer's `ready`: the stream's messages up to its last one in the file that this
   * consumer has not settled (handed out or not), from its position as it stands in memory and the
   * stream's last sequence, read from the file's tail (what opening a consumer reads).
   */
  async backlog(): Promise<BacklogCounts> {
    this.assertOpen();
    const named = this.#named;
    if (named === undefined) {
      throw new RustStreamError(
        "unsupported",
        `"${this.name}" has no consumer name, so no position to count a backlog from: give the FileStream a consumer`,
      );
    }
    const tip = streamTip(this.#host.path, this.name)?.seq ?? 0n;
    return { ready: named.position.unsettledUpTo(tip) };
  }

  static async open(host: FileHost, stream: FileStream): Promise<FileSubscription> {
    const key = stream.name;
    const consumerName = stream.consumer;
    if (consumerName === undefined) {
      const consumer = await FileConsumer.open(host.path, {
        from: stream.start,
        follow: !stream.replay,
        streamKey: key,
        maxMessageBytes: host.maxMessageBytes,
      });
      return new FileSubscription(host, key, consumer, undefined, undefined);
    }
    const claim = sidecarPath(host.path, consumerName, key);
    if (openConsumers.has(claim)) {
      throw new RustStreamError(
        "invalid-argument",
        `consumer "${consumerName}" of "${key}" is already subscribed in this process: close that subscription first, or use another consumer name`,
      );
    }
    openConsumers.add(claim);
    try {
      const sidecar = new Sidecar(claim, key);
      let stored = sidecar.load();
      let copied: Set<bigint> | undefined;
      if (stored === undefined) {
        // A new consumer stores where it starts, so what is appended before its first settle is
        // not skipped by a restart.
        const next =
          stream.start === "beginning" ? 0n : (streamTip(host.path, key)?.seq ?? 0n) + 1n;
        const start = { next, open: [] };
        stored = start;
        await sidecar.store(() => start);
      } else {
        const clamped = withinFile(stored, streamTip(host.path, key)?.seq ?? 0n);
        if (clamped !== stored) {
          stored = clamped;
          await sidecar.store(() => clamped);
        }
        // The copies this consumer wrote for messages it had not settled on disk: those messages
        // are not delivered again (their copy took their place).
        copied = await copiesInFile(host, consumerName, key, stored.open[0] ?? stored.next);
      }
      const named: Named = {
        consumer: consumerName,
        sidecar,
        position: new ConsumerPosition(stored, copied),
      };
      // Read again from the oldest message left unsettled; what was settled after it is skipped.
      const consumer = await FileConsumer.open(host.path, {
        from: { seq: stored.open[0] ?? stored.next },
        follow: !stream.replay,
        streamKey: key,
        maxMessageBytes: host.maxMessageBytes,
      });
      return new FileSubscription(host, key, consumer, named, consumerName);
    } catch (error) {
      openConsumers.delete(claim);
      throw error;
    }
  }

  /** An append to this stream counted for the in-process coordinator. */
  count(offset: number): void {
    this.#counted.add(offset);
    this.#host.coordinator?.enqueued();
  }

  protected async pull(max: number): Promise<readonly FileDelivery[]> {
    const first = await this.#nextOne();
    if (first === undefined) return [];
    const batch = [first];
    while (batch.length < max && this.#requeued.length > 0) {
      batch.push(this.#redeliver(this.#requeued.shift()!));
    }
    if (batch.length < max && this.#fetch === undefined) {
      for (const m of this.#consumer.takeBuffered(max - batch.length)) {
        if (this.#admit(m)) batch.push(this.#deliver(m));
      }
    }
    return batch;
  }

  /** The next delivery, requeued ones first; `undefined` once closed. */
  async #nextOne(): Promise<FileDelivery | undefined> {
    for (;;) {
      if (this.revokedWith !== undefined) throw this.revokedWith;
      if (this.closed) return undefined;
      const requeued = this.#requeued.shift();
      if (requeued) return this.#redeliver(requeued);
      // A message already read goes at once, with no wait set up for it: only a pull that has to
      // go to the file (or wait for an append) waits, for the read or a requeue.
      const ready = this.#fetch === undefined ? this.#consumer.takeBuffered(1)[0] : undefined;
      const got = ready ?? (await this.#readOrRequeue());
      // Revoked while reading: what was read stays in the file, unsettled, for the next reader.
      if (this.revokedWith !== undefined) throw this.revokedWith;
      this.#host.assertOpen();
      if (got === "requeue") continue;
      if (got === undefined) return undefined;
      if (!this.#admit(got)) continue;
      return this.#deliver(got);
    }
  }

  /**
   * The consumer's next message (`undefined` at its end), or "requeue" when a requeue (or a close)
   * comes first. A requeue leaves the read in flight, for the next turn to take.
   */
  async #readOrRequeue(): Promise<DecodedMessage | undefined | "requeue"> {
    this.#fetch ??= this.#consumer.next();
    const fetch = this.#fetch;
    // The wake-up carries no message, and only the read's own promise holds the message. When the
    // promise a requeue resolves also received the message (Promise.race), a 2,000,000-message
    // replay ran mark-compacts back to back and peaked at 1.7 times the reader's resident set
    // (issue 26, tooling/bench README); awaiting the read itself stays near the reader's.
    let read = false;
    await new Promise<void>((resolve) => {
      this.#wakeRequeue = resolve;
      const done = () => {
        read = true;
        resolve();
      };
      fetch.then(done, done);
    });
    this.#wakeRequeue = undefined;
    if (!read) return "requeue";
    try {
      const got = await fetch;
      if (fetch === this.#fetch) this.#fetch = undefined;
      return got;
    } catch (error) {
      this.#fetch = undefined;
      this.#host.assertOpen();
      throw failure(error, this.name);
    }
  }

  async seek(position: FilePosition): Promise<void> {
    this.seekTo(position, isFilePosition, "a file position");
    const target = position.target;
    let from: ReadFrom;
    if (target.kind === "beginning" || target.kind === "end") {
      from = target.kind;
    } else {
      const tip = streamTip(this.#host.path, this.name);
      const beyond =
        tip === undefined ||
        (target.kind === "sequence" ? target.seq > tip.seq : target.ms >= tip.timestamp);
      if (beyond) {
        throw new RustStreamError(
          "unknown-position",
          `position ${position} of "${this.name}" is past what the file holds (last sequence ${tip?.seq ?? "none"}): seek to a stored position, or to "end"`,
        );
      }
      from = target.kind === "sequence" ? { seq: target.seq } : { timestamp: target.ms };
    }
    // Deliveries handed out before the seek may still be settled; they no longer move anything.
    this.#generation++;
    this.#fetch = undefined;
    this.#releaseAll();
    this.#named?.position.reset();
    this.#consumer.seek(from);
  }

  parsePosition(text: string): FilePosition {
    return FilePosition.parse(text);
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#host.forget(this);
    await this.#letGo();
  }

  // HostedSubscription: the connection's shutdown revokes every subscription, then surrenders each.

  /** A waiting pull rejects with `error`, and so does every later one. */
  revoke(error: RustStreamError): void {
    this.markRevoked(error);
    this.#wakeRequeue?.();
  }

  /**
   * Lets go of the file and answers how many deliveries went back: a named consumer's handed out
   * and unsettled, or requeued and not handed out again, stay open in its stored position, so the
   * next subscription under its name delivers them again. An unnamed consumer keeps no position:
   * nothing goes back (0).
   */
  async surrender(): Promise<number> {
    const returned = this.#named === undefined ? 0 : this.#out.size + this.#requeued.length;
    await this.#letGo();
    return returned;
  }

  /** Stops reading, releases what was counted, and frees the consumer name once its store settled. */
  async #letGo(): Promise<void> {
    this.#consumer.close();
    this.#wakeRequeue?.();
    this.#releaseAll();
    const named = this.#named;
    if (named) {
      openConsumers.delete(named.sidecar.path);
      await named.sidecar.settle().catch(() => {});
    }
  }

  // DeliveryOwner
  assertOpen(): void {
    this.#host.assertOpen();
  }

  settle(delivery: FileDelivery, verb: "ack" | "drop" | "requeue"): SettleResult {
    this.#host.assertOpen();
    const named = this.#named;
    if (named === undefined) {
      // Nothing to tell the file; for a test's coordinator the delivery is done all the same.
      this.#release(delivery);
      return "unsupported";
    }
    if (delivery.generation !== this.#generation) {
      this.#release(delivery);
      return "ok";
    }
    if (verb === "requeue") {
      this.#out.delete(delivery);
      this.#requeued.push({
        message: delivery.message,
        counted: delivery.counted,
        redeliveryCount: delivery.redeliveryCount ?? 1,
      });
      delivery.counted = false;
      this.#wakeRequeue?.();
      return "ok";
    }
    this.#release(delivery);
    const position = named.position;
    position.settle(delivery.seq);
    return named.sidecar
      .store(() => position.snapshot())
      .then(
        () => "ok" as const,
        (error: unknown) => {
          throw fileError(
            "FILE_IO",
            `could not store the position of "${this.name}" in ${named.sidecar.path} (${error instanceof Error ? error.message : String(error)}); the next settle stores it again`,
            undefined,
            error,
          );
        },
      );
  }

  /**
   * Whether a message read is handed out: a named consumer skips what its last process settled, and
   * what it wrote a copy of (settled here: the copy took its place).
   */
  #admit(message: DecodedMessage): boolean {
    if (this.#named === undefined || this.#named.position.admit(message.seq) === "deliver") {
      return true;
    }
    if (this.#counted.delete(message.offset)) this.#host.coordinator?.consumed();
    return false;
  }

  #deliver(message: DecodedMessage): FileDelivery {
    const counted = this.#counted.delete(message.offset);
    this.#named?.position.delivered(message.seq);
    const count = this.#named === undefined ? undefined : 1;
    const delivery = new FileDelivery(
      this,
      message,
      this.#generation,
      counted,
      count,
      this.#originOf(message),
    );
    if (counted || this.#named !== undefined) this.#out.add(delivery);
    return delivery;
  }

  #redeliver(requeued: Requeued): FileDelivery {
    const delivery = new FileDelivery(
      this,
      requeued.message,
      this.#generation,
      requeued.counted,
      requeued.redeliveryCount + 1,
      this.#originOf(requeued.message),
    );
    if (requeued.counted || this.#named !== undefined) this.#out.add(delivery);
    return delivery;
  }

  #originOf(message: DecodedMessage): DeliveryOrigin | undefined {
    const named = this.#named;
    if (named === undefined) return undefined;
    return {
      path: this.#host.path,
      consumer: named.consumer,
      streamKey: this.name,
      seq: message.seq,
    };
  }

  #release(delivery: FileDelivery): void {
    if (!this.#out.delete(delivery) || !delivery.counted) return;
    delivery.counted = false;
    this.#host.coordinator?.consumed();
  }

  /** Everything counted and not settled is abandoned: released for the coordinator. */
  #releaseAll(): void {
    let n = this.#counted.size;
    this.#counted.clear();
    for (const d of this.#out) {
      if (!d.counted) continue;
      d.counted = false;
      n++;
    }
    this.#out.clear();
    for (const r of this.#requeued.splice(0)) if (r.counted) n++;
    if (n > 0) this.#host.coordinator?.consumed(n);
  }
}
