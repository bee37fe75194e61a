import { hostname } from "node:os";
import {
  type BacklogCounts,
  type HeaderMap,
  type ReadonlyHeaderMap,
  RustStreamError,
  type SeekableSubscription,
} from "@ruststream/core";
import {
  backlogMark,
  type HostedSubscription,
  movesMark,
  PullSubscription,
  type ReportsBacklog,
  type ReportsMoves,
  seekMark,
} from "@ruststream/core/broker";
import { encodeFrame } from "../client/frame.js";
import type { BlockingLink, Link } from "../client/link.js";
import { array, type Command, errorCode, type RedisBytes, type Reply } from "../client/resp.js";
import { oneSlot } from "../client/slots.js";
import type { RedisHost } from "../host.js";
import { countedHeaders } from "../names.js";
import { isRedisStreamPosition, RedisStreamPosition } from "../position.js";
import type { RedisStream } from "../sources.js";
import { AckBatch } from "./ackBatch.js";
import { copyThenAckCall, copyThenAckScript } from "./copyThenAck.js";
import { parseDelayedMember, sweepDelayed } from "./delayedRetry.js";
import { entriesOfRead, entryFields, type HeldEntry, parseEntry, xadd } from "./entry.js";
import { groupBacklog } from "./groupBacklog.js";
import { PendingClaims } from "./pendingClaims.js";
import { RedisStreamDelivery, type StreamDeliveryOwner } from "./streamDelivery.js";

let consumers = 0;

/** A consumer name no other subscription of any process uses. */
function uniqueConsumer(): string {
  consumers++;
  const salt = Math.floor(Math.random() * 0xffffff).toString(16);
  return `ruststream-${hostname()}-${process.pid}-${consumers}-${salt}`;
}

function startId(source: RedisStream): string {
  const start = source.start;
  if (start === "new") return "$";
  if (start === "beginning") return "0";
  return RedisStreamPosition.parse(start.after).toString();
}

/**
 * A subscription to a stream through a consumer group. Reads `COUNT` entries at a time on its own
 * connection, hands them out one by one or in batches, and between reads moves due delayed retries
 * back onto the stream and, when asked to, reclaims entries that dead consumers left pending
 * (pendingClaims.ts, with the recovery of its own after a reconnect). Its acks leave batched
 * (ackBatch.ts); a settle that moves an entry (a requeue, a delay, a dead letter, a copy) writes the
 * copy and acks the original in one step (copyThenAck.ts).
 */
export class RedisStreamSubscription
  extends PullSubscription<RedisStreamDelivery>
  implements
    SeekableSubscription<RedisStreamDelivery>,
    ReportsMoves,
    ReportsBacklog,
    StreamDeliveryOwner,
    HostedSubscription
{
  readonly [seekMark] = true as const;
  readonly [movesMark] = true as const;
  readonly [backlogMark] = true as const;
  readonly name: string;
  readonly group: string;
  readonly consumer: string;
  readonly maxAttempts: number | undefined;
  readonly deadLetterTarget: string | undefined;
  readonly #host: RedisHost;
  readonly #source: RedisStream;
  /** The delayed-retry set, named for the deployment (see RedisStream.keys); none when off. */
  readonly #delayed: string | undefined;
  readonly #reader: BlockingLink;
  readonly #ownConsumer: boolean;
  readonly #buffer: HeldEntry[] = [];
  /** Handed out and not yet settled: returned to the stream if the connection shuts down first. */
  readonly #out = new Set<RedisStreamDelivery>();
  #lock: Promise<unknown> = Promise.resolve();
  #nextSweep = 0;
  readonly #claims: PendingClaims;
  /** The reader's reconnects as of the last read: more since, and the next read recovers first. */
  #reconnectsSeen = 0;
  #readEndsAt = 0;
  #wakeTimer: NodeJS.Timeout | undefined;
  #onMoved: ((moved: RedisStreamDelivery, destination: string, reason: string) => void) | undefined;
  #leave: () => void = () => {};
  readonly #acks: AckBatch;
  /** The read started ahead (see #readAhead), awaited by the next take before a read of its own. */
  #ahead: Promise<void> | undefined;

  private constructor(host: RedisHost, source: RedisStream, group: string, reader: BlockingLink) {
    super();
    this.#host = host;
    this.#source = source;
    this.#delayed = source.keys(host.link.cluster !== undefined).delayed;
    this.#reader = reader;
    this.name = source.name;
    this.group = group;
    this.#ownConsumer = source.consumer === undefined;
    this.consumer = source.consumer ?? uniqueConsumer();
    this.maxAttempts = source.retry?.maxAttempts;
    this.deadLetterTarget = source.retry?.deadLetter;
    this.#claims = new PendingClaims(host, source, this, reader);
    this.#acks = new AckBatch((ids) => host.link.call("XACK", [this.name, this.group, ...ids]));
  }

  /** Creates the group when missing, then opens the subscription's own connection. */
  static async open(
    host: RedisHost,
    source: RedisStream,
    group: string,
  ): Promise<RedisStreamSubscription> {
    await createGroup(host, source, group);
    const reader = await host.link.blocking(source.name);
    const subscription = new RedisStreamSubscription(host, source, group, reader);
    subscription.#leave =
      host.link.joined?.({ kind: "stream", key: source.name, group }) ?? subscription.#leave;
    const delayed = subscription.#delayed;
    if (delayed !== undefined) {
      host.link.watchDelayed?.(delayed, (member) => subscription.#restore(member));
    }
    return subscription;
  }

  async seek(position: RedisStreamPosition): Promise<void> {
    this.seekTo(position, isRedisStreamPosition, "a Redis stream position");
    const id = position.toString();
    const found = array(await this.#host.link.call("XRANGE", [this.name, id, id, "COUNT", 1]));
    if (found.length === 0) {
      throw new RustStreamError(
        "unknown-position",
        `stream "${this.name}" holds no entry ${id} (trimmed, deleted or never written): seek to a position a delivery reported`,
      );
    }
    await this.#reader.interrupt();
    await this.#exclusive(async () => {
      this.#host.assertOpen();
      // Group-wide, as XGROUP SETID is: every consumer of the group reads on from here.
      await this.#host.link.call("XGROUP", ["SETID", this.name, this.group, position.previous()]);
      const dropped = this.#buffer.splice(0);
      if (dropped.length > 0) {
        await this.#host.link.call("XACK", [
          this.name,
          this.group,
          ...dropped.map((h) => h.entry.id),
        ]);
      }
    });
  }

  /**
   * The group's lag and pending entries, and the delayed retries parked in the stream's set, in one
   * `MULTI` (see groupBacklog.ts; `Backlog` in the README).
   */
  backlog(): Promise<BacklogCounts> {
    return groupBacklog(this.#host.link, this.name, this.group, this.#delayed);
  }

  parsePosition(text: string): RedisStreamPosition {
    return RedisStreamPosition.parse(text);
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#acks.flush();
    this.#host.forget(this);
    clearTimeout(this.#wakeTimer);
    await this.#reader.interrupt();
    await this.#exclusive(async () => {
      // Read but never handed out: back to the stream, as if never read.
      if (!this.#host.isClosed) await this.#giveBack(this.#buffer.splice(0), []);
    });
    this.#leave();
    await this.#reader.close();
  }

  // HostedSubscription

  async revoke(error: RustStreamError): Promise<void> {
    this.markRevoked(error);
    this.#acks.flush();
    clearTimeout(this.#wakeTimer);
    await this.#reader.interrupt();
    await this.#lock.catch(() => undefined);
  }

  async surrender(): Promise<number> {
    // Acks of this tick go out ahead of what follows on the same link (DELCONSUMER included).
    this.#acks.flush();
    const buffered = this.#buffer.splice(0);
    const out = [...this.#out];
    this.#out.clear();
    await this.#giveBack(buffered, out);
    if (this.#ownConsumer) {
      // Nothing is pending for it any more; leaving it would clutter XINFO CONSUMERS.
      await this.#host.link
        .call("XGROUP", ["DELCONSUMER", this.name, this.group, this.consumer])
        .catch(() => undefined);
    }
    this.#leave();
    await this.#reader.close();
    return buffered.length + out.length;
  }

  // StreamDeliveryOwner

  assertOpen(): void {
    this.#host.assertOpen();
  }

  /** Batched with the rest of the tick's acks (ackBatch.ts); resolves once the server answered. */
  acknowledge(id: string): Promise<void> {
    return this.#acks.add(id);
  }

  async requeue(id: string, headers: ReadonlyHeaderMap, payload: Uint8Array): Promise<void> {
    await this.#move(id, xadd(this.name, entryFields(headers, payload), this.#host.maxLen));
  }

  delay(
    id: string,
    headers: ReadonlyHeaderMap,
    payload: Uint8Array,
    ms: number,
  ): Promise<boolean> | false {
    const delayed = this.#source.delayedRetry;
    const key = this.#delayed;
    if (delayed === undefined || key === undefined) return false;
    const due = this.#host.link.now() + ms;
    const idBytes = Buffer.from(id);
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(idBytes.length);
    const member = Buffer.concat([length, idBytes, encodeFrame(headers, payload)]);
    this.#wakeAt(due);
    const expireMs = delayed.ttlMs === undefined ? undefined : Math.max(1, delayed.ttlMs);
    return this.#move(id, { name: "ZADD", args: [key, due, member] }, expireMs).then(() => true);
  }

  async deadLetter(
    id: string,
    target: string,
    headers: HeaderMap,
    payload: Uint8Array,
  ): Promise<void> {
    await this.#move(id, xadd(target, entryFields(headers, payload), this.#host.maxLen));
  }

  forward(id: string, copy: Command, link: Link): Promise<Reply> | undefined {
    return link === this.#host.link ? this.#move(id, copy) : undefined;
  }

  /**
   * Writes `copy` and acks entry `id` as one step, only while this consumer holds the entry (see
   * copyThenAck.ts); answers the copy's reply, or nil when the entry was no longer ours to move. On a
   * cluster whose copy lies in another slot than the stream no script reaches both: the copy is
   * written first and the ack after, so a cut between the two leaves a duplicate, never a loss.
   */
  #move(id: string, copy: Command, expireMs?: number): Promise<Reply> {
    const link = this.#host.link;
    const held = { stream: this.name, group: this.group, consumer: this.consumer, id };
    const { keys, args } = copyThenAckCall(held, copy, expireMs);
    if (link.cluster === undefined || oneSlot(keys)) {
      return link.script(copyThenAckScript, keys, args);
    }
    return (async () => {
      const reply = await link.call(copy.name, copy.args);
      if (expireMs !== undefined) await link.call("PEXPIRE", [keys[1], expireMs]);
      await link.call("XACK", [this.name, this.group, id]);
      return reply;
    })();
  }

  /** The app's runtime counts the entries the reclaim moves to the dead letter unhandled. */
  onMoved(
    listener: (moved: RedisStreamDelivery, destination: string, reason: string) => void,
  ): void {
    this.#onMoved = listener;
  }

  settled(delivery: RedisStreamDelivery): void {
    this.#out.delete(delivery);
  }

  // Pulling

  protected async pull(max: number): Promise<RedisStreamDelivery[]> {
    while (this.#buffer.length === 0) {
      if (this.revokedWith !== undefined) throw this.revokedWith;
      if (this.closed) return [];
      const ahead = this.#ahead;
      this.#ahead = undefined;
      await (ahead ?? this.#exclusive(() => this.#fill()));
    }
    if (this.revokedWith !== undefined) throw this.revokedWith;
    const held = this.#buffer.splice(0, max);
    if (this.#buffer.length === 0) this.#readAhead();
    const deliveries: RedisStreamDelivery[] = [];
    for (const h of held) {
      const delivery = new RedisStreamDelivery(this, this.name, h.entry, h.deliveryCount);
      this.#out.add(delivery);
      deliveries.push(delivery);
    }
    return deliveries;
  }

  /**
   * Starts the next read once the buffer is empty, so the server reads while the handlers work on
   * what the last read brought instead of after them. One read ahead at most; what it brings is
   * held unread (given back on close, dropped by a seek) until taken. Its failure is raised by the
   * next take, as that take's own read would have raised it.
   */
  #readAhead(): void {
    if (this.closed || this.revokedWith !== undefined || this.#ahead !== undefined) return;
    const read = this.#exclusive(() => this.#fill());
    read.catch(() => undefined);
    this.#ahead = read;
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(work, work);
    this.#lock = run.catch(() => undefined);
    return run;
  }

  async #fill(): Promise<void> {
    if (this.closed) return;
    const link = this.#host.link;
    const now = link.now();
    try {
      const delayed = this.#delayed;
      if (delayed !== undefined && now >= this.#nextSweep) {
        this.#nextSweep = now + this.#source.blockMs;
        await sweepDelayed(link, delayed, now, (member) => this.#restore(member));
      }
      const reconnects = this.#reader.reconnects;
      if (reconnects !== this.#reconnectsSeen) {
        const recovered = await this.#recoverOwnPending();
        this.#reconnectsSeen = reconnects;
        if (recovered) return;
      }
      if (await this.#holdClaimed(await this.#claims.reclaimDue(now))) return;
      if (this.closed) return;
      const until = Math.min(
        now + this.#source.blockMs,
        this.#delayed === undefined ? Number.POSITIVE_INFINITY : this.#nextSweep,
        this.#claims.nextReclaim,
      );
      const block = Math.max(1, Math.ceil(until - now));
      this.#readEndsAt = now + block;
      // What was acked this tick goes ahead of the read, as each ack on its own did.
      this.#acks.flush();
      const reply = await this.#reader.call("XREADGROUP", [
        "GROUP",
        this.group,
        this.consumer,
        "COUNT",
        this.#source.count,
        "BLOCK",
        block,
        "STREAMS",
        this.name,
        ">",
      ]);
      for (const raw of entriesOfRead(reply)) {
        const entry = parseEntry(raw);
        if (entry !== undefined) this.#buffer.push({ entry, deliveryCount: 1 });
      }
    } catch (error) {
      if (this.closed || this.#host.isClosed) return;
      const code = errorCode(error);
      if (code === "NOGROUP") {
        // The key or the group was deleted (FLUSHALL, a server without persistence restarted).
        await createGroup(this.#host, this.#source, this.group).catch(() => undefined);
        return;
      }
      if (code !== "" && code !== "LOADING" && code !== "BUSY" && code !== "UNBLOCKED") {
        throw new RustStreamError(
          "broker-failure",
          `reading stream "${this.name}" as group "${this.group}" failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
      // The connection is being re-established: pause, then read again.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      this.#readEndsAt = 0;
    }
  }

  /**
   * After the connection came back, what the group holds pending for this consumer and the
   * subscription does not (pendingClaims.ts) is handed out again. Acks settled before the cut go
   * first (on the command connection): what they acknowledge is not pending any more, and a failed
   * one leaves its entry pending, to be delivered again.
   */
  async #recoverOwnPending(): Promise<boolean> {
    this.#acks.flush();
    await this.#acks.sent?.catch(() => undefined);
    const held = new Set<string>();
    for (const h of this.#buffer) held.add(h.entry.id);
    for (const d of this.#out) held.add(d.entry.id);
    return this.#holdClaimed(await this.#claims.recover(held));
  }

  /**
   * Entries this consumer claimed (by a reclaim, or recovered after a cut) join the buffer with the
   * delivery counts the group keeps; one already past the broker-side cap goes to the dead letter
   * unhandled. Answers whether any joined.
   */
  async #holdClaimed(claimed: readonly HeldEntry[]): Promise<boolean> {
    let kept = 0;
    for (const { entry, deliveryCount: count } of claimed) {
      const delivery = new RedisStreamDelivery(this, this.name, entry, count);
      if (this.deadLetterTarget !== undefined && delivery.attempt > (this.maxAttempts ?? 1)) {
        // Its last attempt ran (and crashed): past the cap, so it goes to the dead letter unhandled.
        await delivery.moveTo(this.deadLetterTarget, "max-attempts");
        this.#onMoved?.(delivery, this.deadLetterTarget, "max-attempts");
        continue;
      }
      this.#buffer.push({ entry, deliveryCount: count });
      kept++;
    }
    return kept > 0;
  }

  /** A due delayed copy goes back onto the stream. */
  #restore(member: RedisBytes): Command {
    const { headers, payload } = parseDelayedMember(member);
    return xadd(this.name, entryFields(headers, payload), this.#host.maxLen);
  }

  /** Makes the blocked read return when a delayed retry this subscription parked falls due. */
  #wakeAt(due: number): void {
    if (due < this.#nextSweep) this.#nextSweep = due;
    if (this.#readEndsAt === 0 || due >= this.#readEndsAt) return;
    clearTimeout(this.#wakeTimer);
    this.#wakeTimer = setTimeout(
      () => void this.#reader.interrupt(),
      Math.max(0, due - this.#host.link.now()),
    );
    this.#wakeTimer.unref?.();
  }

  /**
   * Returns held entries to the stream: copies appended, originals acked, atomically. A copy's header
   * counts the deliveries its entry had, but not the read that only buffered it.
   */
  async #giveBack(
    buffered: readonly HeldEntry[],
    out: readonly RedisStreamDelivery[],
  ): Promise<void> {
    if (buffered.length === 0 && out.length === 0) return;
    const commands: Command[] = [];
    const ids: string[] = [];
    // In id order, so they come back in the order they were read.
    const all = [
      ...out.map((d) => ({ entry: d.entry, count: d.deliveryCount })),
      ...buffered.map((h) => ({ entry: h.entry, count: h.deliveryCount - 1 })),
    ].sort((a, b) => compareIds(a.entry.id, b.entry.id));
    for (const { entry, count } of all) {
      commands.push(
        xadd(
          this.name,
          entryFields(countedHeaders(entry.headers, count), entry.payload),
          this.#host.maxLen,
        ),
      );
      ids.push(entry.id);
    }
    commands.push({ name: "XACK", args: [this.name, this.group, ...ids] });
    await this.#host.link.transaction(commands);
  }
}

function compareIds(a: string, b: string): number {
  const pa = RedisStreamPosition.parse(a);
  const pb = RedisStreamPosition.parse(b);
  if (pa.ms !== pb.ms) return pa.ms < pb.ms ? -1 : 1;
  return pa.sequence < pb.sequence ? -1 : pa.sequence > pb.sequence ? 1 : 0;
}

async function createGroup(host: RedisHost, source: RedisStream, group: string): Promise<void> {
  try {
    await host.link.call("XGROUP", ["CREATE", source.name, group, startId(source), "MKSTREAM"]);
  } catch (error) {
    if (errorCode(error) === "BUSYGROUP") return;
    throw new RustStreamError(
      "broker-failure",
      `creating group "${group}" on stream "${source.name}" failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
