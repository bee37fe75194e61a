import { type BacklogCounts, RustStreamError } from "@ruststream/core";
import {
  backlogMark,
  type HostedSubscription,
  PullSubscription,
  type ReportsBacklog,
} from "@ruststream/core/broker";
import { decodeFrame, encodeFrame } from "../client/frame.js";
import type { BlockingLink, Link } from "../client/link.js";
import { type Arg, array, type Command, errorCode, type Reply } from "../client/resp.js";
import { assertScriptKeys, oneSlot } from "../client/slots.js";
import type { RedisHost } from "../host.js";
import { countedHeaders, SWEEP_BATCH } from "../names.js";
import type { RedisList } from "../sources.js";
import { type ListDeliveryOwner, RedisListDelivery } from "./listDelivery.js";
import {
  claimMember,
  recoverScript,
  SALT_LENGTH,
  settleScript,
  takeScript,
} from "./listScripts.js";

const none: readonly RedisListDelivery[] = [];
// A claim's salt (pid and counter) keeps claims of two identical values apart.
const pid = Buffer.alloc(4);
pid.writeUInt32BE(process.pid >>> 0);
/** The last claim counter handed out; a take reserves one per value it may move. */
let claimed = 0;

/**
 * A subscription to a reliable list: a pull moves up to `count` values from the queue's right end
 * into the processing list in one script, which also claims them when recovery is on; settling
 * removes the value from the processing list. On an empty queue the list's own connection blocks
 * until a value arrives. With recovery on, claims are timed in a sorted set, and values a dead
 * consumer held longer than `recoveryIdleMs` go back.
 */
export class RedisListSubscription
  extends PullSubscription<RedisListDelivery>
  implements ListDeliveryOwner, HostedSubscription, ReportsBacklog
{
  readonly [backlogMark] = true as const;
  readonly name: string;
  readonly #host: RedisHost;
  readonly #source: RedisList;
  /** The processing list and the recovery set, named for the deployment (see RedisList.keys). */
  readonly #processing: string;
  readonly #recovery: string;
  readonly #reader: BlockingLink;
  readonly #out = new Set<RedisListDelivery>();
  #sequence = 0n;
  #reading: Promise<readonly RedisListDelivery[]> = Promise.resolve(none);
  #nextRecovery = 0;
  #leave: () => void = () => {};

  private constructor(
    host: RedisHost,
    source: RedisList,
    keys: { processing: string; recovery: string },
    reader: BlockingLink,
  ) {
    super();
    this.#host = host;
    this.#source = source;
    this.#processing = keys.processing;
    this.#recovery = keys.recovery;
    this.#reader = reader;
    this.name = source.name;
  }

  /**
   * The queue's values (`ready`) and the processing list's (`leased`: taken by every consumer
   * sharing it, not settled), two `LLEN`s in one transaction, one round trip (`backlog` in the
   * README's Metrics).
   */
  async backlog(): Promise<BacklogCounts> {
    let replies: Reply[];
    try {
      replies = await this.#host.link.transaction([
        { name: "LLEN", args: [this.name] },
        { name: "LLEN", args: [this.#processing] },
      ]);
    } catch (error) {
      throw new RustStreamError(
        "broker-failure",
        `reading the backlog of list "${this.name}" (LLEN of it and of "${this.#processing}"): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    const [ready, leased] = replies;
    return { ready: Number(ready), leased: Number(leased) };
  }

  /** Opens the list's own connection; on a cluster, once its three keys are found in one slot. */
  static async open(host: RedisHost, source: RedisList): Promise<RedisListSubscription> {
    const keys = source.keys(host.link.cluster !== undefined);
    if (host.link.cluster !== undefined) {
      assertScriptKeys(
        `reliable list "${source.name}"`,
        [keys.queue, keys.processing, keys.recovery],
        `Leave processing and recoveryKey out (they are then named into the queue's slot), or give all three one hash tag, as "{jobs}", "{jobs}.processing" and "{jobs}.recovery"`,
      );
    }
    const reader = await host.link.blocking(source.name);
    const subscription = new RedisListSubscription(host, source, keys, reader);
    subscription.#leave =
      host.link.joined?.({ kind: "list", key: source.name, processing: keys.processing }) ??
      subscription.#leave;
    return subscription;
  }

  /**
   * Moves up to `max` values (at most the source's `count`) into processing: as many as the queue
   * holds at once, or, when it is empty, waits for one.
   */
  protected async pull(max: number): Promise<readonly RedisListDelivery[]> {
    for (;;) {
      const revoked = this.revokedWith;
      if (revoked !== undefined) throw revoked;
      if (this.closed) return none;
      const read = this.#read(Math.min(max, this.#source.count));
      this.#reading = read;
      const deliveries = await read;
      const revokedNow = this.revokedWith;
      if (revokedNow !== undefined) {
        // Moved into processing just as the connection shut down: give them back at once.
        if (deliveries.length > 0) await this.#giveBack(deliveries).catch(() => undefined);
        throw revokedNow;
      }
      if (deliveries.length > 0) {
        for (const delivery of deliveries) this.#out.add(delivery);
        return deliveries;
      }
    }
  }

  async close(): Promise<void> {
    if (!this.markClosed()) return;
    this.#host.forget(this);
    await this.#reader.interrupt();
    const moved = await this.#reading.catch(() => none);
    // Moved into processing by the read the close interrupted, never handed out: back in front.
    const kept = moved.filter((delivery) => !this.#out.has(delivery));
    if (kept.length > 0) await this.#giveBack(kept).catch(() => undefined);
    this.#leave();
    await this.#reader.close();
  }

  // HostedSubscription

  async revoke(error: RustStreamError): Promise<void> {
    this.markRevoked(error);
    await this.#reader.interrupt();
    await this.#reading.catch(() => none);
  }

  async surrender(): Promise<number> {
    const out = [...this.#out];
    this.#out.clear();
    if (out.length > 0) await this.#giveBack(out);
    this.#leave();
    await this.#reader.close();
    return out.length;
  }

  // ListDeliveryOwner

  assertOpen(): void {
    this.#host.assertOpen();
  }

  async remove(delivery: RedisListDelivery): Promise<void> {
    // With recovery off no claim tells two equal values apart, so the script would find the value
    // by its bytes, as `LREM` does: one plain command then, for the same effect, resent or not.
    if (delivery.claim === undefined) {
      await this.#host.link.call("LREM", [this.#processing, 1, delivery.raw]);
    } else {
      await this.#settle(delivery);
    }
  }

  async requeue(delivery: RedisListDelivery): Promise<void> {
    // LPUSH: the far end from where consumers pop, so a failing message waits its turn again.
    const frame = encodeFrame(countedHeaders(delivery.headers, 1), delivery.payload);
    await this.#settle(delivery, { name: "LPUSH", args: [this.name, frame] });
  }

  forward(delivery: RedisListDelivery, copy: Command, link: Link): Promise<Reply> | undefined {
    return link === this.#host.link ? this.#settle(delivery, copy) : undefined;
  }

  settled(delivery: RedisListDelivery): void {
    this.#out.delete(delivery);
  }

  /**
   * Writes `copy` (if any) and releases the value as one step, only while it is still held (see
   * listScripts.ts settleScript): nil when it was not, and nothing written. On a cluster whose copy
   * or recovery set lies in another slot than the processing list no script reaches them all: the
   * copy is written first and the value released after, so a cut between the two leaves a
   * duplicate, never a loss.
   */
  #settle(delivery: RedisListDelivery, copy?: Command): Promise<Reply> {
    const link = this.#host.link;
    const target = copy === undefined ? this.#processing : String(copy.args[0]);
    const keys = [this.#processing, this.#recovery, target];
    if (link.cluster === undefined || oneSlot(keys)) {
      return link.script(settleScript, keys, [
        delivery.raw,
        delivery.claim ?? "",
        copy?.name ?? "",
        ...(copy?.args.slice(1) ?? []),
      ]);
    }
    return (async () => {
      const reply = copy === undefined ? 1 : await link.call(copy.name, copy.args);
      await link.call("LREM", [this.#processing, 1, delivery.raw]);
      if (delivery.claim !== undefined) await link.call("ZREM", [this.#recovery, delivery.claim]);
      return reply;
    })();
  }

  /**
   * Moves up to `max` values from the queue into processing and claims them, in one script (one
   * round trip, all or nothing). When the queue was empty, waits on the list's own connection for a
   * value to arrive (a `BLMOVE` of the queue onto itself, which moves nothing) and answers none, so
   * the pull takes it with the next script. Empty too when that wait timed out or was interrupted.
   */
  async #read(max: number): Promise<readonly RedisListDelivery[]> {
    const link = this.#host.link;
    const source = this.#source;
    try {
      if (source.recoveryIdleMs !== undefined && link.now() >= this.#nextRecovery) {
        this.#nextRecovery = link.now() + Math.min(source.recoveryIdleMs, source.blockMs);
        await this.#recover(source.recoveryIdleMs);
      }
      if (this.closed) return none;
      const claiming = source.recoveryIdleMs !== undefined;
      const base = claimed + 1;
      if (claiming) claimed += max;
      const args: Arg[] = claiming ? [max, link.now(), pid, base] : [max];
      const raws = array(
        await link.script(takeScript, [this.name, this.#processing, this.#recovery], args),
      ).filter((raw): raw is Buffer => Buffer.isBuffer(raw));
      if (raws.length === 0) {
        if (this.closed) return none;
        const block =
          source.recoveryIdleMs === undefined
            ? source.blockMs
            : Math.max(1, Math.min(source.blockMs, this.#nextRecovery - link.now()));
        await this.#reader.call("BLMOVE", [
          this.name,
          this.name,
          "RIGHT",
          "RIGHT",
          (block / 1000).toFixed(3),
        ]);
        return none;
      }
      return raws.map(
        (raw, i) =>
          new RedisListDelivery(
            this,
            this.name,
            raw,
            decodeFrame(raw),
            ++this.#sequence,
            claiming ? claimMember(pid, base + i, raw) : undefined,
          ),
      );
    } catch (error) {
      if (this.closed || this.#host.isClosed) return none;
      const code = errorCode(error);
      if (code !== "" && code !== "LOADING" && code !== "BUSY" && code !== "UNBLOCKED") {
        const message = (error as Error).message;
        const fix =
          code === "NOPERM" && /eval/i.test(message)
            ? ": a reliable list moves values with a script, so the ACL user needs +@scripting (EVAL, EVALSHA) besides the list and sorted-set commands"
            : "";
        throw new RustStreamError(
          "broker-failure",
          `reading list "${this.name}" failed: ${message}${fix}`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      return none;
    }
  }

  /** Puts values held longer than `idleMs` by any consumer back on the queue. */
  async #recover(idleMs: number): Promise<void> {
    const link = this.#host.link;
    for (;;) {
      const stale = array(
        await link.call("ZRANGEBYSCORE", [
          this.#recovery,
          "-inf",
          link.now() - idleMs,
          "LIMIT",
          0,
          SWEEP_BATCH,
        ]),
      ).filter((m): m is Buffer => Buffer.isBuffer(m));
      for (const member of stale) {
        const raw = member.subarray(SALT_LENGTH);
        // The dead consumer had it, so it goes back counted: a value that kills every consumer
        // that takes it reaches the cap instead of circling for ever.
        const { headers, payload } = decodeFrame(raw);
        await link.script(
          recoverScript,
          [this.name, this.#processing, this.#recovery],
          [member, raw, encodeFrame(countedHeaders(headers, 1), payload)],
        );
      }
      if (stale.length < SWEEP_BATCH) return;
    }
  }

  /**
   * Puts held values back at the head of the queue (the end consumers pop from), in the order they
   * were taken, each counted as an attempt. One pipeline, RPUSHing the last first so the first taken
   * is popped first again; each value is released with its copy, and one no longer held (taken for
   * dead and given back already) is given back by no one.
   */
  async #giveBack(deliveries: readonly RedisListDelivery[]): Promise<void> {
    const lastFirst = [...deliveries].sort((a, b) =>
      a.position.sequence < b.position.sequence ? 1 : -1,
    );
    await Promise.all(
      lastFirst.map((d) =>
        this.#settle(d, {
          name: "RPUSH",
          args: [this.name, encodeFrame(countedHeaders(d.headers, 1), d.payload)],
        }),
      ),
    );
  }
}
