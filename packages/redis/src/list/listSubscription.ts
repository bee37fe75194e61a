import { RustStreamError, subscriptionIterator } from "@ruststream/core";
import { decodeFrame, encodeFrame } from "../frame.js";
import type { HostedSubscription, RedisHost } from "../host.js";
import { array, type BlockingLink, type Command, errorCode } from "../link/link.js";
import { SWEEP_BATCH } from "../names.js";
import { countedHeaders } from "../retryCount.js";
import type { RedisList } from "../sources.js";
import { type ListDeliveryOwner, RedisListDelivery } from "./listDelivery.js";

const done: IteratorResult<RedisListDelivery, undefined> = { done: true, value: undefined };
// A claim member is `pid (4 B BE) | counter (8 B BE) | value`, as in RustStream: the salt keeps
// claims of two identical values apart.
const SALT_LENGTH = 12;
let claims = 0n;

function claimMember(raw: Buffer): Buffer {
  const salt = Buffer.allocUnsafe(SALT_LENGTH);
  salt.writeUInt32BE(process.pid >>> 0, 0);
  salt.writeBigUInt64BE(++claims, 4);
  return Buffer.concat([salt, raw]);
}

/**
 * A subscription to a reliable list: `BLMOVE` from the queue's right end into the processing list on
 * its own connection; settling removes the value from the processing list. With recovery on, claims
 * are timed in a sorted set, and values a dead consumer held longer than `recoveryIdleMs` go back.
 */
export class RedisListSubscription implements ListDeliveryOwner, HostedSubscription {
  readonly name: string;
  readonly #host: RedisHost;
  readonly #source: RedisList;
  readonly #reader: BlockingLink;
  readonly #out = new Set<RedisListDelivery>();
  #sequence = 0n;
  #closed = false;
  #revoked: RustStreamError | undefined;
  #taking = false;
  #reading: Promise<unknown> = Promise.resolve();
  #nextRecovery = 0;
  #onForget: (() => void) | undefined;
  #leave: () => void = () => {};

  private constructor(host: RedisHost, source: RedisList, reader: BlockingLink) {
    this.#host = host;
    this.#source = source;
    this.#reader = reader;
    this.name = source.name;
  }

  static async open(
    host: RedisHost,
    source: RedisList,
    onForget: () => void,
  ): Promise<RedisListSubscription> {
    const subscription = new RedisListSubscription(host, source, await host.link.blocking());
    subscription.#onForget = onForget;
    subscription.#leave =
      host.link.joined?.({ kind: "list", key: source.name, processing: source.processing }) ??
      subscription.#leave;
    return subscription;
  }

  async next(): Promise<IteratorResult<RedisListDelivery, undefined>> {
    this.#host.assertOpen();
    if (this.#closed) return done;
    if (this.#taking) {
      throw new RustStreamError(
        "invalid-argument",
        `a second next() on "${this.name}" while one is waiting: pull one at a time, or open another subscription to consume in parallel`,
      );
    }
    this.#taking = true;
    try {
      for (;;) {
        if (this.#revoked !== undefined) throw this.#revoked;
        if (this.#closed) return done;
        const read = this.#read();
        this.#reading = read;
        const delivery = await read;
        if (this.#revoked !== undefined) {
          // Moved into processing just as the connection shut down: give it back at once.
          if (delivery !== undefined) await this.#giveBack([delivery]).catch(() => undefined);
          throw this.#revoked;
        }
        if (delivery !== undefined) {
          this.#out.add(delivery);
          return { done: false, value: delivery };
        }
      }
    } finally {
      this.#taking = false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onForget?.();
    await this.#reader.interrupt();
    const moved = await this.#reading.catch(() => undefined);
    // Moved into processing by the read the close interrupted, never handed out: back in front.
    if (moved instanceof RedisListDelivery && !this.#out.has(moved)) {
      await this.#giveBack([moved]).catch(() => undefined);
    }
    this.#leave();
    await this.#reader.close();
  }

  [Symbol.asyncIterator](): AsyncIterator<RedisListDelivery, undefined> {
    return subscriptionIterator(this);
  }

  // HostedSubscription

  async revoke(error: RustStreamError): Promise<void> {
    this.#revoked = error;
    this.#closed = true;
    await this.#reader.interrupt();
    await this.#reading.catch(() => undefined);
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
    await this.#host.link.transaction(this.#release(delivery));
  }

  async requeue(delivery: RedisListDelivery): Promise<void> {
    // LPUSH: the far end from where consumers pop, so a failing message waits its turn again.
    await this.#host.link.transaction([
      {
        name: "LPUSH",
        args: [this.name, encodeFrame(countedHeaders(delivery.headers, 1), delivery.payload)],
      },
      ...this.#release(delivery),
    ]);
  }

  settled(delivery: RedisListDelivery): void {
    this.#out.delete(delivery);
  }

  #release(delivery: RedisListDelivery): Command[] {
    const commands: Command[] = [
      { name: "LREM", args: [this.#source.processing, 1, delivery.raw] },
    ];
    if (delivery.claim !== undefined) {
      commands.push({ name: "ZREM", args: [this.#source.recoveryKey, delivery.claim] });
    }
    return commands;
  }

  /** One move from the queue into processing; `undefined` when the read timed out or was interrupted. */
  async #read(): Promise<RedisListDelivery | undefined> {
    const link = this.#host.link;
    const source = this.#source;
    try {
      if (source.recoveryIdleMs !== undefined && link.now() >= this.#nextRecovery) {
        this.#nextRecovery = link.now() + Math.min(source.recoveryIdleMs, source.blockMs);
        await this.#recover(source.recoveryIdleMs);
      }
      if (this.#closed) return undefined;
      const block =
        source.recoveryIdleMs === undefined
          ? source.blockMs
          : Math.max(1, Math.min(source.blockMs, this.#nextRecovery - link.now()));
      const raw = await this.#reader.call("BLMOVE", [
        this.name,
        source.processing,
        "RIGHT",
        "LEFT",
        (block / 1000).toFixed(3),
      ]);
      if (!Buffer.isBuffer(raw)) return undefined;
      let claim: Buffer | undefined;
      if (source.recoveryIdleMs !== undefined) {
        claim = claimMember(raw);
        await link.call("ZADD", [source.recoveryKey, link.now(), claim]);
      }
      this.#sequence++;
      return new RedisListDelivery(this, this.name, raw, decodeFrame(raw), this.#sequence, claim);
    } catch (error) {
      if (this.#closed || this.#host.isClosed) return undefined;
      const code = errorCode(error);
      if (code !== "" && code !== "LOADING" && code !== "BUSY" && code !== "UNBLOCKED") {
        throw new RustStreamError(
          "broker-failure",
          `reading list "${this.name}" failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      return undefined;
    }
  }

  /** Puts values held longer than `idleMs` by any consumer back on the queue. */
  async #recover(idleMs: number): Promise<void> {
    const link = this.#host.link;
    const source = this.#source;
    for (;;) {
      const stale = array(
        await link.call("ZRANGEBYSCORE", [
          source.recoveryKey,
          "-inf",
          link.now() - idleMs,
          "LIMIT",
          0,
          SWEEP_BATCH,
        ]),
      ).filter((m): m is Buffer => Buffer.isBuffer(m));
      for (const member of stale) {
        const raw = member.subarray(SALT_LENGTH);
        // Only the sweeper whose LREM found the value pushes it back: no doubles across sweepers.
        // The dead consumer had it, so it goes back counted: a value that kills every consumer
        // that takes it reaches the cap instead of circling for ever.
        if ((await link.call("LREM", [source.processing, 1, raw])) === 1) {
          const { headers, payload } = decodeFrame(raw);
          await link.call("LPUSH", [this.name, encodeFrame(countedHeaders(headers, 1), payload)]);
        }
        await link.call("ZREM", [source.recoveryKey, member]);
      }
      if (stale.length < SWEEP_BATCH) return;
    }
  }

  /**
   * Puts held values back at the head of the queue (the end consumers pop from), in the order they
   * were taken, each counted as an attempt, and removes them from processing, atomically.
   */
  async #giveBack(deliveries: readonly RedisListDelivery[]): Promise<void> {
    const ordered = [...deliveries].sort((a, b) =>
      a.position.sequence < b.position.sequence ? -1 : 1,
    );
    const commands: Command[] = [];
    // RPUSH the last first, so the first taken is popped first again.
    for (const d of [...ordered].reverse()) {
      const frame = encodeFrame(countedHeaders(d.headers, 1), d.payload);
      commands.push({ name: "RPUSH", args: [this.name, frame] });
    }
    for (const d of ordered) commands.push(...this.#release(d));
    await this.#host.link.transaction(commands);
  }
}
