import type { BlockingLink } from "../client/link.js";
import { array, text } from "../client/resp.js";
import type { RedisHost } from "../host.js";
import type { RedisStream } from "../sources.js";
import { entriesOfRead, type HeldEntry, parseEntry, type StreamEntry } from "./entry.js";

/** Who claims: the stream, the group and the consumer a subscription reads as. */
export interface Claimant {
  readonly name: string;
  readonly group: string;
  readonly consumer: string;
}

/**
 * The entries a stream subscription takes over from the group's pending lists, with the delivery
 * counts the group keeps: what dead consumers left pending longer than `reclaimIdleMs`
 * (`XAUTOCLAIM`, page by page, when the source asks for it), and, after the subscription's own
 * connection came back, what the group holds pending for this very consumer that the subscription
 * does not hold. What to do with them (hand them out, or dead-letter one past its cap) is the
 * subscription's.
 */
export class PendingClaims {
  readonly #host: RedisHost;
  readonly #source: RedisStream;
  readonly #claimant: Claimant;
  readonly #reader: BlockingLink;
  #nextReclaim = 0;
  #reclaimCursor = "0-0";

  constructor(host: RedisHost, source: RedisStream, claimant: Claimant, reader: BlockingLink) {
    this.#host = host;
    this.#source = source;
    this.#claimant = claimant;
    this.#reader = reader;
  }

  /** When the next reclaim falls due: never when the source does not reclaim. */
  get nextReclaim(): number {
    return this.#source.reclaimIdleMs === undefined ? Number.POSITIVE_INFINITY : this.#nextReclaim;
  }

  /** `XAUTOCLAIM` one page, where a reclaim is due at `now`; answers what it claimed. */
  async reclaimDue(now: number): Promise<readonly HeldEntry[]> {
    const minIdle = this.#source.reclaimIdleMs;
    if (minIdle === undefined || now < this.#nextReclaim) return [];
    const link = this.#host.link;
    const { name, group, consumer } = this.#claimant;
    const reply = array(
      await link.call("XAUTOCLAIM", [
        name,
        group,
        consumer,
        minIdle,
        this.#reclaimCursor,
        "COUNT",
        this.#source.count,
      ]),
    );
    const cursor = text(reply[0]);
    this.#reclaimCursor = cursor === "" ? "0-0" : cursor;
    // A full scan found nothing more: rest until the next interval.
    if (this.#reclaimCursor === "0-0") {
      this.#nextReclaim = link.now() + Math.min(minIdle, this.#source.blockMs);
    }
    const entries = array(reply[1])
      .map(parseEntry)
      .filter((e): e is StreamEntry => e !== undefined);
    return this.#counted(entries);
  }

  /**
   * After the connection came back, what the group holds pending for this very consumer that the
   * subscription does not hold itself (`held`, by id): an entry read by a reply the cut swallowed
   * (the server kept it pending here; nobody saw it), or one whose ack the cut swallowed. Each is
   * handed out again, at least once rather than never: the group would keep it pending for this
   * consumer for good, where only a reclaim (off by default) would find it. Read as this consumer's
   * history, page by page; an entry deleted meanwhile is acked, as there is nothing left to deliver.
   * The subscription sends its own acks first, so that what they acknowledge is not found here.
   */
  async recover(held: ReadonlySet<string>): Promise<readonly HeldEntry[]> {
    const { name, group, consumer } = this.#claimant;
    const found: StreamEntry[] = [];
    const gone: string[] = [];
    let cursor = "0-0";
    for (;;) {
      const page = entriesOfRead(
        await this.#reader.call("XREADGROUP", [
          "GROUP",
          group,
          consumer,
          "COUNT",
          this.#source.count,
          "STREAMS",
          name,
          cursor,
        ]),
      );
      if (page.length === 0) break;
      for (const raw of page) {
        const entry = parseEntry(raw);
        const id = entry?.id ?? text(array(raw)[0]);
        cursor = id;
        if (entry === undefined) gone.push(id);
        else if (!held.has(id)) found.push(entry);
      }
    }
    if (gone.length > 0) await this.#host.link.call("XACK", [name, group, ...gone]);
    return this.#counted(found);
  }

  /** Claimed entries with their delivery counts, from one extended `XPENDING` over their range. */
  async #counted(entries: readonly StreamEntry[]): Promise<readonly HeldEntry[]> {
    if (entries.length === 0) return [];
    const { name, group, consumer } = this.#claimant;
    const counts = new Map<string, number>();
    const reply = await this.#host.link.call("XPENDING", [
      name,
      group,
      entries[0]!.id,
      entries[entries.length - 1]!.id,
      entries.length * 2,
      consumer,
    ]);
    for (const row of array(reply)) {
      const fields = array(row);
      const count = fields[3];
      if (typeof count === "number") counts.set(text(fields[0]), count);
    }
    return entries.map((entry) => ({ entry, deliveryCount: counts.get(entry.id) ?? 1 }));
  }
}
