import { jetStreamHeaders, kvHeaders, scheduleHeaders } from "../names.js";
import { schedulePatternRefused } from "../schedule.js";
import { type CronPattern, type CronZone, cronZone, nextCron, readCron } from "./standInCron.js";

/** A schedule the stand-in keeps: when it first fires (wall-clock ms), and how often after. */
export interface StandInSchedule {
  readonly target: string;
  /** Wall-clock milliseconds of its first delivery. */
  readonly at: number;
  /** Milliseconds between deliveries of a repeating schedule; `undefined`: once, or on `cron`. */
  readonly everyMs: number | undefined;
  /** The cron pattern it repeats on, and the zone it is read in; `undefined`: none. */
  readonly cron?: { readonly pattern: CronPattern; readonly zone: CronZone };
  /** The `Nats-TTL` each delivery carries, as the schedule gave it; `undefined`: none. */
  readonly ttl?: string;
  /** The subject whose last message is delivered in place of the schedule's own. */
  readonly source?: string;
  /** Whether each delivery is a rollup of its target. */
  readonly rollup: boolean;
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** A Go duration's units in milliseconds, as `@every` takes them. */
const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go duration (`1500ms`, `1m30s`) in milliseconds, or `undefined` when it does not read. */
function goDurationMs(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined;
  return parts.reduce(
    (sum, [, n, unit]) => sum + Number(n) * (unitMs[unit as string] as number),
    0,
  );
}

/**
 * The schedule a message's headers ask for, read as the server reads `Nats-Schedule` (`@at` an RFC
 * 3339 time, `@every` a Go duration of a second or more, otherwise a cron pattern in the server's
 * dialect; a time zone, an IANA name, only beside a cron pattern), or `undefined` when it carries
 * none. `wallTime`: now, wall-clock ms; a cron schedule's first time is the pattern's next after it.
 */
export function readSchedule(
  subject: string,
  header: (name: string) => string | undefined,
  wallTime: number,
): Pick<StandInSchedule, "at" | "everyMs" | "cron"> | undefined {
  const value = header(scheduleHeaders.schedule);
  if (value === undefined || value === "") return undefined;
  const zoneName = header(scheduleHeaders.timeZone);
  const zoned = zoneName !== undefined;
  if (value.startsWith("@at ")) {
    const text = value.slice(4);
    const at = rfc3339.test(text) ? Date.parse(text) : Number.NaN;
    if (zoned || Number.isNaN(at)) throw schedulePatternRefused(subject);
    return { at, everyMs: undefined };
  }
  if (value.startsWith("@every ")) {
    const everyMs = goDurationMs(value.slice(7));
    if (zoned || everyMs === undefined || everyMs < 1000) throw schedulePatternRefused(subject);
    return { at: wallTime + everyMs, everyMs };
  }
  // An empty zone is refused as the server refuses it; none is UTC.
  const zone = zoneName === "" ? undefined : cronZone(zoneName);
  const pattern = readCron(value);
  const at =
    zone === undefined || pattern === undefined ? undefined : nextCron(pattern, zone, wallTime);
  if (zone === undefined || pattern === undefined || at === undefined)
    throw schedulePatternRefused(subject);
  return { at, everyMs: undefined, cron: { pattern, zone } };
}

/**
 * The headers a delivery of the schedule stored on `scheduleSubject` carries, as the server writes
 * them: those of the message delivered (the schedule's own, or its source's last), less the
 * scheduling, expectation, id, TTL and rollup headers, with the schedule subject it came from,
 * `purge` (once) or its next time (repeating, as the server writes it: RFC 3339), and the
 * schedule's TTL and rollup for the delivery.
 */
export function deliveryHeaders(
  headers: readonly (readonly [string, string])[],
  scheduleSubject: string,
  next: string | undefined,
  schedule: Pick<StandInSchedule, "ttl" | "rollup">,
): (readonly [string, string])[] {
  const dropped = new Set<string>([jetStreamHeaders.msgId, jetStreamHeaders.ttl, kvHeaders.rollup]);
  return [
    ...headers.filter(
      ([name]) =>
        !name.startsWith(scheduleHeaders.schedule) &&
        !name.startsWith("Nats-Expected-") &&
        !dropped.has(name),
    ),
    [scheduleHeaders.scheduler, scheduleSubject],
    [scheduleHeaders.next, next ?? "purge"],
    ...(schedule.ttl === undefined ? [] : [[jetStreamHeaders.ttl, schedule.ttl] as const]),
    ...(schedule.rollup ? [[kvHeaders.rollup, "sub"] as const] : []),
  ];
}
