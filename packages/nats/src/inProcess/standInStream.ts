import { RustStreamError } from "@ruststream/core";
import { type Frame, type PubAck, rollupRefused, ttlDisabled } from "../client/link.js";
import { jetStreamHeaders, kvHeaders, scheduleHeaders } from "../names.js";
import { scheduleSourceRefused, schedulesDisabled, scheduleTargetRefused } from "../schedule.js";
import type { StreamDeclaration } from "../sources.js";
import { readSchedule, type StandInSchedule } from "./standInSchedule.js";
import { subjectMatches } from "./subjects.js";

/** Whole seconds as a Go duration prints them (`5s`, `1m0s`, `1h0m0s`): how the server's markers carry their TTL. */
export function goDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/**
 * `Nats-TTL` as the server reads it: `never` (-1), bare seconds (0: no TTL), or a duration in
 * whole h, m and s as the server's markers write theirs (under a second: invalid); `undefined`
 * when it does not read.
 */
function parseTtl(value: string): number | undefined {
  if (value.toLowerCase() === "never") return -1;
  if (/^\d+$/.test(value)) return Number(value);
  const [whole, h = "0", m = "0", sec = "0"] =
    /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value) ?? [];
  const seconds = Number(h) * 3600 + Number(m) * 60 + Number(sec);
  return whole === undefined || whole === "" || seconds < 1 ? undefined : seconds;
}

/** One message a stand-in stream stores. */
export interface StoredEntry {
  readonly sequence: bigint;
  readonly subject: string;
  readonly payload: Uint8Array;
  readonly headers: readonly (readonly [string, string])[];
  /** Clock milliseconds when stored. */
  readonly time: number;
  /** Wall-clock milliseconds when stored, for a seek by time. */
  readonly wallTime: number;
}

/** What a stand-in stream's kind adds: a KV bucket's or an object store's per-subject limit. */
export interface StreamKind {
  /** The most entries kept per subject (a KV bucket's history). */
  readonly perSubject: number;
  /** Whether it takes direct gets (`allow_direct`), as a KV bucket's stream does. */
  readonly direct?: boolean;
  /** How long the marker lives that a subject gets once its last entry ran out of time (seconds). */
  readonly markerTtlSeconds?: number | undefined;
}

/** The server's default window in which a repeated `Nats-Msg-Id` is a duplicate: 2 minutes. */
const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;

/**
 * A stream as the server keeps one, for what the package uses: its subjects, its messages by
 * sequence, `Nats-Msg-Id` deduplication within the duplicate window, and the expectation headers
 * checked before storing, each refused with the server's words. A KV bucket's stream keeps at most
 * `perSubject` entries a subject (the oldest dropped) and takes a rollup (`Nats-Rollup: sub`, a
 * purge), which drops the subject's earlier entries.
 */
export class StandInStream {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly entries: StoredEntry[] = [];
  /** Whether it takes atomic batches (`allow_atomic`). */
  readonly atomic: boolean;
  /** Whether a message may carry its own TTL (`allow_msg_ttl`). */
  readonly messageTtl: boolean;
  /** Whether it takes direct gets (`allow_direct`). */
  readonly direct: boolean;
  /** Whether it takes message schedules (`allow_msg_schedules`). */
  readonly messageSchedules: boolean;
  /** Whether a publish may carry `Nats-Rollup` (`allow_rollup_hdrs`). */
  readonly rollups: boolean;
  /** A subject's marker's TTL once its last entry ran out of time, or `undefined`: no markers. */
  readonly markerTtlSeconds: number | undefined;
  readonly #duplicateWindowMs: number;
  /** The most entries kept per subject (a KV bucket's history), or `undefined`: no limit. */
  readonly #perSubject: number | undefined;
  /** Message id to the sequence that stored it and when (clock ms). */
  readonly #ids = new Map<string, { sequence: bigint; at: number }>();
  #last = 0n;
  #lastMsgId: string | undefined;

  constructor(
    name: string,
    subjects: readonly string[],
    declaration: StreamDeclaration,
    kind?: StreamKind,
  ) {
    this.name = name;
    this.#perSubject = kind?.perSubject;
    this.subjects = [...subjects];
    this.#duplicateWindowMs = declaration.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS;
    this.atomic = declaration.atomicPublish === true;
    this.markerTtlSeconds = kind?.markerTtlSeconds;
    this.direct = kind?.direct === true;
    // As the server does, markers allow message TTLs.
    this.messageTtl = declaration.messageTtl === true || this.markerTtlSeconds !== undefined;
    this.messageSchedules = declaration.messageSchedules === true;
    // As the server: schedules bring rollups with them, and the clients declare a KV bucket's and
    // an object store's stream (the kinds) with them; a stream declared otherwise takes none.
    this.rollups = this.messageSchedules || kind !== undefined;
  }

  stores(subject: string): boolean {
    return this.subjects.some((pattern) => subjectMatches(pattern, subject));
  }

  get first(): bigint {
    return this.entries[0]?.sequence ?? (this.#last === 0n ? 0n : this.#last + 1n);
  }

  get last(): bigint {
    return this.#last;
  }

  /** The entry stored at `sequence`, unless dropped (a binary search: a KV stream drops some). */
  entryAt(sequence: bigint): StoredEntry | undefined {
    let low = 0;
    let high = this.entries.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const entry = this.entries[mid] as StoredEntry;
      if (entry.sequence === sequence) return entry;
      if (entry.sequence < sequence) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }

  /** The last entry stored on `subject`, or `undefined`. */
  lastOn(subject: string): StoredEntry | undefined {
    return this.entries.findLast((e) => e.subject === subject);
  }

  /** Drops the entry at `sequence` (its TTL ran out): whether it was there. */
  remove(sequence: bigint): boolean {
    const entry = this.entryAt(sequence);
    if (entry === undefined) return false;
    this.entries.splice(this.entries.indexOf(entry), 1);
    return true;
  }

  /**
   * Stores `frame` unless an expectation fails (rejects as the server answers) or its message id
   * is a duplicate within the window (answers the first one's sequence). `stored` is told of a new
   * entry; `ttlSeconds` is its own TTL (0: none); `schedule`, the schedule it holds, if one.
   */
  store(
    frame: Frame,
    now: number,
    wallTime: number,
  ): PubAck & {
    entry?: StoredEntry;
    removed: readonly bigint[];
    ttlSeconds: number;
    schedule?: StandInSchedule;
  } {
    const header = (name: string) => frame.headers.find(([n]) => n === name)?.[1];
    const expectedStream = header(jetStreamHeaders.expectedStream);
    if (expectedStream !== undefined && expectedStream !== this.name)
      this.#refuse("expected stream does not match");
    const expectedLast = header(jetStreamHeaders.expectedLastSequence);
    if (expectedLast !== undefined && BigInt(expectedLast) !== this.#last)
      this.#refuse(`wrong last sequence: ${this.#last}`);
    const expectedSubjectLast = header(jetStreamHeaders.expectedLastSubjectSequence);
    if (expectedSubjectLast !== undefined) {
      const last =
        [...this.entries].reverse().find((e) => e.subject === frame.subject)?.sequence ?? 0n;
      if (BigInt(expectedSubjectLast) !== last) this.#refuse(`wrong last sequence: ${last}`);
    }
    const expectedMsgId = header(jetStreamHeaders.expectedLastMsgId);
    if (expectedMsgId !== undefined && expectedMsgId !== (this.#lastMsgId ?? ""))
      this.#refuse("wrong last msg ID");
    const ttlHeader = header(jetStreamHeaders.ttl);
    const ttlSeconds = this.#ttlOf(frame.subject, ttlHeader);
    // A TTL the markers raised is written again, last, as the server rewrites the header.
    const raised = ttlHeader !== undefined && ttlSeconds > 0 && parseTtl(ttlHeader) !== ttlSeconds;
    const schedule = this.#scheduleOf(frame.subject, header, wallTime);
    const msgId = header(jetStreamHeaders.msgId);
    if (msgId !== undefined) {
      const seen = this.#ids.get(msgId);
      if (seen !== undefined && now - seen.at < this.#duplicateWindowMs) {
        return {
          stream: this.name,
          sequence: seen.sequence,
          duplicate: true,
          removed: [],
          ttlSeconds: 0,
        };
      }
    }
    const rollupValue = this.#rollupOf(frame.subject, header(kvHeaders.rollup));
    let headers = raised
      ? [
          ...frame.headers.filter(([name]) => name !== jetStreamHeaders.ttl),
          [jetStreamHeaders.ttl, String(ttlSeconds)] as const,
        ]
      : frame.headers;
    // A schedule is a rollup of its subject, as the server stores it: it replaces the one before.
    const rollup = schedule !== undefined ? "sub" : rollupValue;
    if (schedule !== undefined && rollupValue === undefined)
      headers = [...headers, [kvHeaders.rollup, "sub"]];
    const entry: StoredEntry = {
      sequence: ++this.#last,
      subject: frame.subject,
      payload: frame.payload,
      headers,
      time: now,
      wallTime,
    };
    this.entries.push(entry);
    if (msgId !== undefined) {
      this.#ids.set(msgId, { sequence: entry.sequence, at: now });
      this.#lastMsgId = msgId;
    }
    const removed =
      rollup === "all"
        ? this.#rollUpAll(entry)
        : this.#perSubject === undefined && rollup === undefined
          ? []
          : this.#trim(frame.subject, rollup === "sub");
    return {
      stream: this.name,
      sequence: entry.sequence,
      duplicate: false,
      entry,
      removed,
      ttlSeconds,
      ...(schedule === undefined ? {} : { schedule }),
    };
  }

  /**
   * The schedule a message holds, checked as the server checks one, in its order: refused where
   * the stream takes none, for a delivery TTL it cannot read or where the stream takes no TTL, a
   * rollup other than `sub`, a target the stream does not store (or the schedule's own subject),
   * and a source the stream does not store (or the target, or the schedule's own subject).
   */
  #scheduleOf(
    subject: string,
    header: (name: string) => string | undefined,
    wallTime: number,
  ): StandInSchedule | undefined {
    if (header(scheduleHeaders.schedule) === undefined) return undefined;
    if (!this.messageSchedules) throw schedulesDisabled(subject);
    const read = readSchedule(subject, header, wallTime);
    if (read === undefined) return undefined;
    const ttl = header(scheduleHeaders.ttl);
    if (ttl !== undefined && parseTtl(ttl) === undefined)
      this.#refuse("message schedules invalid per-message TTL");
    const rollup = header(scheduleHeaders.rollup);
    if (rollup !== undefined && rollup !== "sub") this.#refuse("message schedules invalid rollup");
    // A schedule is stored as a rollup of its subject: one of all the stream is not taken.
    const own = header(kvHeaders.rollup);
    if (own !== undefined && own !== "" && own.toLowerCase() !== "sub")
      this.#refuse("message schedules invalid rollup");
    if (ttl !== undefined && !this.messageTtl) throw ttlDisabled(subject);
    const target = header(scheduleHeaders.target);
    const unstored = (other: string) =>
      other === subject || /[\s*>]/.test(other) || !this.stores(other);
    if (target === undefined || unstored(target)) throw scheduleTargetRefused(subject);
    const source = header(scheduleHeaders.source);
    if (source !== undefined && (source === target || unstored(source)))
      throw scheduleSourceRefused(subject);
    return {
      ...read,
      target,
      ...(ttl === undefined ? {} : { ttl }),
      ...(source === undefined ? {} : { source }),
      rollup: rollup !== undefined,
    };
  }

  /**
   * A publish's `Nats-Rollup`, read as the server reads it (any case; empty: none): `sub` or `all`,
   * refused on a stream that takes no rollups and for any other value.
   */
  #rollupOf(subject: string, value: string | undefined): "sub" | "all" | undefined {
    if (value === undefined || value === "") return undefined;
    if (!this.rollups) throw rollupRefused(subject);
    const lower = value.toLowerCase();
    if (lower === "sub" || lower === "all") return lower;
    this.#refuse(`rollup value invalid: ${JSON.stringify(lower)}`);
  }

  /** A rollup of the whole stream: every entry before `kept` goes. */
  #rollUpAll(kept: StoredEntry): bigint[] {
    const dropped = this.entries.filter((e) => e !== kept).map((e) => e.sequence);
    this.entries.splice(0, this.entries.length, kept);
    return dropped;
  }

  #refuse(what: string): never {
    throw new RustStreamError(
      "publish-refused",
      `the stream "${this.name}" refused the message: ${what}`,
    );
  }

  /**
   * A message's TTL in seconds (0: nothing to expire, `never` too), refused where the stream takes
   * none. Under markers, raised to the markers' TTL unless a subject keeps one entry, as the server
   * does.
   */
  #ttlOf(subject: string, value: string | undefined): number {
    if (value === undefined) return 0;
    const seconds = parseTtl(value);
    // As the server: a TTL other than none is refused where the stream takes none, before its
    // form is looked at.
    if (seconds !== 0 && !this.messageTtl) throw ttlDisabled(subject);
    if (seconds === undefined) {
      throw new RustStreamError(
        "publish-refused",
        `the stream "${this.name}" refused the message: invalid per-message TTL`,
      );
    }
    if (seconds <= 0) return 0;
    const marker = this.markerTtlSeconds;
    return marker !== undefined && this.#perSubject !== 1 ? Math.max(seconds, marker) : seconds;
  }

  /**
   * Drops the entries of `subject` (a purge by filter), every one or those before the sequence
   * `before`: the sequences dropped.
   */
  purge(subject: string, before?: bigint): bigint[] {
    const drops = (e: StoredEntry) =>
      e.subject === subject && (before === undefined || e.sequence < before);
    const dropped = this.entries.filter(drops).map((e) => e.sequence);
    if (dropped.length === 0) return [];
    const kept = this.entries.filter((e) => !drops(e));
    this.entries.splice(0, this.entries.length, ...kept);
    return dropped;
  }

  /** Drops the subject's entries past its history, or all but the last on a rollup. */
  #trim(subject: string, rollup: boolean): bigint[] {
    const keep = rollup ? 1 : (this.#perSubject as number);
    const ofSubject = this.entries.filter((e) => e.subject === subject);
    const drop = new Set(ofSubject.slice(0, Math.max(0, ofSubject.length - keep)));
    if (drop.size === 0) return [];
    const kept = this.entries.filter((e) => !drop.has(e));
    this.entries.splice(0, this.entries.length, ...kept);
    return [...drop].map((e) => e.sequence);
  }
}
