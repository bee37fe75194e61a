import { RustStreamError } from "@ruststream/core";
import { scheduleHeaders } from "./names.js";
import { wholeSeconds } from "./ttl.js";

/**
 * When the stream delivers a scheduled message (NATS message schedules: `@at` since 2.12, `@every`
 * and cron on the server this package runs against, 2.15): once at a time, every so often, or on a
 * cron pattern. The publish goes to a schedule subject, where the stream keeps the schedule (one a
 * subject: a new one on the same subject replaces it); at its time the stream stores a copy of the
 * message on `target`. A one-time schedule is removed once it delivered.
 */
export type NatsSchedule = NatsScheduleTime & {
  /** The subject it is delivered to: one the same stream stores, not the one published to. */
  readonly target: string;
  /**
   * Each delivery's own TTL (`Nats-Schedule-TTL`, stored on the delivery as its `Nats-TTL`): whole
   * seconds in milliseconds, or `"never"`. The stream must allow a message's TTL
   * (`allow_msg_ttl`; `declare: { messageTtl: true }`), or refuses the schedule.
   */
  readonly ttlMs?: number | "never";
  /**
   * Deliver the last message stored on this subject (its payload and headers) in place of the
   * schedule's own, which is delivered when the subject holds none (`Nats-Schedule-Source`, NATS
   * 2.14): one subject the same stream stores, other than the target and the schedule's own.
   */
  readonly source?: string;
  /**
   * Each delivery replaces what its target holds (`Nats-Schedule-Rollup: sub`, NATS 2.14; on the
   * delivery as its `Nats-Rollup`), so the target keeps the latest delivery alone.
   */
  readonly rollup?: boolean;
};

/** The three kinds of time; exactly one is given. */
export type NatsScheduleTime =
  | { readonly at: Date; readonly everyMs?: never; readonly cron?: never }
  | { readonly everyMs: number; readonly at?: never; readonly cron?: never }
  | {
      /**
       * Six fields, seconds first (`"0 30 9 * * 1-5"`), or `@hourly`, `@daily`, `@weekly`,
       * `@monthly`, `@yearly`; read by the server (and the in-process stand-in, in the same
       * dialect), which refuses one it cannot read.
       */
      readonly cron: string;
      /** An IANA time zone the pattern is read in (default UTC). */
      readonly timeZone?: string;
      readonly at?: never;
      readonly everyMs?: never;
    };

const oneLine = (text: string) => text !== "" && !/[\r\n]/.test(text) && text.trim() === text;

/**
 * The headers a schedule stands for, spelled as the server reads them, or the refusal naming the
 * fix before anything is sent. `subject` is the schedule subject the message is published to.
 */
export function scheduleLines(schedule: NatsSchedule, subject: string): [string, string][] {
  const given = (["at", "everyMs", "cron"] as const).filter((k) => schedule[k] !== undefined);
  if (given.length !== 1) {
    throw invalid(
      `give exactly one of at, everyMs and cron, not ${given.length === 0 ? "none" : given.join(" and ")}`,
    );
  }
  const { target, ttlMs, source, rollup } = schedule;
  if (!isSubject(target)) {
    throw invalid(
      `target ${JSON.stringify(target)} is not a subject to deliver to: give one without spaces or wildcards`,
    );
  }
  if (target === subject) {
    throw invalid(
      `target "${target}" is the subject the schedule is published to: publish the schedule on a subject of its own (e.g. "schedules.${target}") the same stream stores`,
    );
  }
  const lines: [string, string][] = [
    [scheduleHeaders.schedule, pattern(schedule)],
    [scheduleHeaders.target, target],
  ];
  if (schedule.cron !== undefined && schedule.timeZone !== undefined) {
    if (!oneLine(schedule.timeZone))
      throw invalid(`timeZone ${JSON.stringify(schedule.timeZone)}: give an IANA name`);
    lines.push([scheduleHeaders.timeZone, schedule.timeZone]);
  }
  if (ttlMs !== undefined) {
    // Whole seconds, as the delivery's `Nats-TTL` takes them, or `never`.
    const value = ttlMs === "never" ? ttlMs : wholeSeconds(ttlMs, 'schedule.ttlMs (or "never")');
    lines.push([scheduleHeaders.ttl, String(value)]);
  }
  if (source !== undefined) {
    if (!isSubject(source)) {
      throw invalid(
        `source ${JSON.stringify(source)} is not a subject to read the last message of: give one without spaces or wildcards`,
      );
    }
    if (source === target || source === subject) {
      throw invalid(
        `source "${source}" is the schedule's ${source === target ? "target" : "own subject"}: give a third subject the same stream stores, whose last message is delivered`,
      );
    }
    lines.push([scheduleHeaders.source, source]);
  }
  if (rollup !== undefined && typeof rollup !== "boolean")
    throw invalid(
      `rollup ${JSON.stringify(rollup)}: give true (each delivery replaces the target's) or leave it out`,
    );
  if (rollup === true) lines.push([scheduleHeaders.rollup, "sub"]);
  return lines;
}

/** One subject a message can be published to: no spaces, no wildcards. */
function isSubject(text: unknown): text is string {
  return typeof text === "string" && text !== "" && !/[\s*>]/.test(text);
}

/** `Nats-Schedule`'s value: `@at <RFC 3339>`, `@every <Go duration>`, or the cron pattern. */
function pattern(schedule: NatsScheduleTime): string {
  if (schedule.at !== undefined) {
    if (!(schedule.at instanceof Date) || Number.isNaN(schedule.at.getTime()))
      throw invalid(`at ${String(schedule.at)} is not a time: give a valid Date`);
    return `@at ${schedule.at.toISOString()}`;
  }
  if (schedule.everyMs !== undefined) {
    if (!Number.isSafeInteger(schedule.everyMs) || schedule.everyMs < 1000)
      throw invalid(
        `everyMs ${JSON.stringify(schedule.everyMs)}: the server repeats at most once a second, give 1000 or more`,
      );
    return `@every ${schedule.everyMs}ms`;
  }
  const cron = schedule.cron as unknown;
  if (typeof cron !== "string" || !oneLine(cron))
    throw invalid(`cron ${JSON.stringify(cron)}: give a pattern of six fields on one line`);
  return cron;
}

function invalid(what: string): RustStreamError {
  return new RustStreamError("invalid-argument", `schedule: ${what}`);
}

/** A scheduled message for a stream that takes none (`allow_msg_schedules` unset). */
export function schedulesDisabled(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "unsupported",
    `the stream that stores "${subject}" takes no message schedules: allow them (allow_msg_schedules, NATS 2.12 or newer; declare: { messageSchedules: true } on a stream)`,
    { cause },
  );
}

/** A schedule whose target the stream does not store (or is the schedule's own subject). */
export function scheduleTargetRefused(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "publish-refused",
    `the stream that stores "${subject}" refused its schedule's target: the target must be a subject the same stream stores, other than the schedule's own`,
    { cause },
  );
}

/** A schedule's source the stream does not store (or its target, or the schedule's own subject). */
export function scheduleSourceRefused(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "publish-refused",
    `the stream that stores "${subject}" refused its schedule's source: the source must be a subject the same stream stores, other than the schedule's target and its own`,
    { cause },
  );
}

/** A schedule pattern or time zone the server cannot read. */
export function schedulePatternRefused(subject: string, cause?: unknown): RustStreamError {
  return new RustStreamError(
    "publish-refused",
    `the stream that stores "${subject}" cannot read the message's schedule: a cron pattern has six fields, seconds first, and a timeZone is an IANA name`,
    { cause },
  );
}
