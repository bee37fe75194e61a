/**
 * The server's cron dialect for message schedules, for the stand-in: six fields, seconds first
 * (`0 30 9 * * 1-5`), each a comma list of `*` or `?`, a number or a name (`jan`, `mon`, any case),
 * a range `a-b`, and a step `/n` on any of them (`5/15` runs to the field's end); day of week 0-6
 * (Sunday 0, no 7); the day matches on day of month AND day of week when either is `*` or `?`
 * (a step over 1 aside), on either otherwise; `@yearly` (`@annually`), `@monthly`, `@weekly`,
 * `@daily` (`@midnight`) and `@hourly` stand for their patterns; a pattern with no time in the
 * next five years is refused. The times are the wall clock of an IANA zone, a time a DST change
 * skips or repeats resolved as Go resolves a wall-clock time.
 *
 * Written here rather than taken from a cron library: the ones for Node read another dialect
 * (five fields or an optional seconds field, `L`, `W`, `#`, Sunday as 7, their own rule for the
 * two day fields, no five-year limit), so each would take patterns the server refuses or fire at
 * other times, and the checks to hold one to the server's dialect would be this parser again.
 */

/** A pattern read: each field's allowed values as bits, the day fields' star marks beside. */
export interface CronPattern {
  readonly seconds: bigint;
  readonly minutes: bigint;
  readonly hours: bigint;
  readonly daysOfMonth: bigint;
  readonly months: bigint;
  readonly daysOfWeek: bigint;
}

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const monthNames = [
  "jan",
  "feb",
  "mar",
  "apr",
  "may",
  "jun",
  "jul",
  "aug",
  "sep",
  "oct",
  "nov",
  "dec",
];
const dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const bounds = {
  seconds: { min: 0, max: 59 },
  minutes: { min: 0, max: 59 },
  hours: { min: 0, max: 23 },
  daysOfMonth: { min: 1, max: 31 },
  months: { min: 1, max: 12, names: Object.fromEntries(monthNames.map((n, i) => [n, i + 1])) },
  daysOfWeek: { min: 0, max: 6, names: Object.fromEntries(dayNames.map((n, i) => [n, i])) },
} satisfies Record<keyof CronPattern, Bounds>;

/** Marks a field written with `*` or `?` (a step of 1 at most): the day fields then both hold. */
const STAR = 1n << 63n;

const predefined: Readonly<Record<string, string>> = {
  "@yearly": "0 0 0 1 1 *",
  "@annually": "0 0 0 1 1 *",
  "@monthly": "0 0 0 1 * *",
  "@weekly": "0 0 0 * * 0",
  "@daily": "0 0 0 * * *",
  "@midnight": "0 0 0 * * *",
  "@hourly": "0 0 * * * *",
};

/** The pattern read, or `undefined` where the server refuses it as written. */
export function readCron(text: string): CronPattern | undefined {
  const fields = (predefined[text] ?? text).split(/\s+/).filter((f) => f !== "");
  if (fields.length !== 6) return undefined;
  const names = Object.keys(bounds) as (keyof CronPattern)[];
  const read: Partial<Record<keyof CronPattern, bigint>> = {};
  for (const [i, name] of names.entries()) {
    const bits = readField(fields[i] as string, bounds[name]);
    if (bits === undefined) return undefined;
    read[name] = bits;
  }
  return read as CronPattern;
}

/** A comma list of ranges (empty items skipped, as the server splits it). */
function readField(field: string, range: Bounds): bigint | undefined {
  let bits = 0n;
  for (const item of field.split(",")) {
    if (item === "") continue;
    const more = readRange(item, range);
    if (more === undefined) return undefined;
    bits |= more;
  }
  return bits;
}

/** `*`, `?`, a number or name, or `a-b`, each with an optional `/step`. */
function readRange(item: string, range: Bounds): bigint | undefined {
  const rangeAndStep = item.split("/");
  const lowAndHigh = (rangeAndStep[0] as string).split("-");
  let start: number | undefined;
  let end: number | undefined;
  let star = false;
  if (lowAndHigh[0] === "*" || lowAndHigh[0] === "?") {
    // What follows a star's hyphen is not read: `*-5` is `*`, as the server takes it.
    [start, end, star] = [range.min, range.max, true];
  } else {
    if (lowAndHigh.length > 2) return undefined;
    start = numberOrName(lowAndHigh[0] as string, range.names);
    end = lowAndHigh.length === 1 ? start : numberOrName(lowAndHigh[1] as string, range.names);
  }
  let step = 1;
  if (rangeAndStep.length > 2) return undefined;
  if (rangeAndStep.length === 2) {
    const given = numberOrName(rangeAndStep[1] as string, undefined);
    if (given === undefined) return undefined;
    step = given;
    // `n/step` runs from n to the field's end.
    if (lowAndHigh.length === 1) end = range.max;
    if (step > 1) star = false;
  }
  if (start === undefined || end === undefined) return undefined;
  if (start < range.min || end > range.max || start > end || step === 0) return undefined;
  let bits = star ? STAR : 0n;
  for (let i = start; i <= end; i += step) bits |= 1n << BigInt(i);
  return bits;
}

/** Go's strconv.Atoi's numbers (a sign allowed, no more than 64 bits), not negative, or a name. */
function numberOrName(text: string, names: Bounds["names"]): number | undefined {
  const named = names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  if (value < 0n || value > 2n ** 63n - 1n) return undefined;
  return Number(value);
}

/**
 * The zone named as the server loads one (Go's LoadLocation: an IANA name as the zone database
 * spells it, `UTC` when none is given), or `undefined` where the server refuses the name.
 */
export function cronZone(name: string | undefined): CronZone | undefined {
  if (name === undefined) return new CronZone("UTC");
  // Go's own name for the zone the server runs in: here, this process's.
  if (name === "Local") return new CronZone(new Intl.DateTimeFormat().resolvedOptions().timeZone);
  // A fixed offset (`+01:00`) is no zone file; a name in another case is not found either.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return undefined;
  let zone: CronZone;
  try {
    zone = new CronZone(name);
  } catch {
    return undefined;
  }
  // The runtime reads a name in any case, the server only as the zone database spells it: the
  // runtime lists the spelling of its canonical names (an alias in another case goes through).
  const lower = name.toLowerCase();
  const spelled = Intl.supportedValuesOf("timeZone").find((n) => n.toLowerCase() === lower);
  const resolved = zone.name;
  const miscased =
    (spelled !== undefined && spelled !== name) ||
    (resolved !== name && resolved.toLowerCase() === lower);
  return miscased ? undefined : zone;
}

/** A zone's wall clock: the fields of an instant there, and the instant of a wall-clock time. */
export class CronZone {
  readonly #format: Intl.DateTimeFormat;

  /** Throws a RangeError for a name the runtime does not know: `cronZone` reads a header's. */
  constructor(zone: string) {
    this.#format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  }

  /** The zone's name as the runtime resolved it. */
  get name(): string {
    return this.#format.resolvedOptions().timeZone;
  }

  /** The wall-clock fields at `ms` (whole seconds) in the zone. */
  fields(ms: number): WallTime {
    const parts: Record<string, number> = {};
    for (const { type, value } of this.#format.formatToParts(ms)) parts[type] = Number(value);
    const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
    return { year, month, day, hour, minute, second, weekday };
  }

  /** The zone's offset from UTC at `ms`, in milliseconds. */
  offset(ms: number): number {
    const f = this.fields(ms);
    return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) - (ms - (ms % 1000));
  }

  /**
   * The instant of a wall-clock time, its fields overflowing into the next as Go's time.Date
   * normalises them; one a DST change skips or repeats takes the offset in force at the wall
   * time read as UTC, or, where that instant is outside it, the offset at the instant it gives.
   */
  at(year: number, month: number, day: number, hour: number, minute: number, second: number) {
    const wall = Date.UTC(year, month - 1, day, hour, minute, second);
    const guess = this.offset(wall);
    const other = this.offset(wall - guess);
    return wall - (other === guess ? guess : other);
  }

  /** `ms` as RFC 3339 in the zone, as the server writes the next time (`Z` for UTC). */
  format(ms: number): string {
    const f = this.fields(ms);
    const two = (n: number) => String(n).padStart(2, "0");
    const offset = Math.round(this.offset(ms) / 60_000);
    const zone =
      offset === 0
        ? "Z"
        : `${offset < 0 ? "-" : "+"}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
    return `${String(f.year).padStart(4, "0")}-${two(f.month)}-${two(f.day)}T${two(f.hour)}:${two(f.minute)}:${two(f.second)}${zone}`;
  }
}

export interface WallTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly weekday: number;
}

const has = (bits: bigint, value: number) => (bits & (1n << BigInt(value))) !== 0n;

function dayMatches(pattern: CronPattern, t: WallTime): boolean {
  const dom = has(pattern.daysOfMonth, t.day);
  const dow = has(pattern.daysOfWeek, t.weekday);
  return (pattern.daysOfMonth & STAR) !== 0n || (pattern.daysOfWeek & STAR) !== 0n
    ? dom && dow
    : dom || dow;
}

/**
 * The first time after `ms` (from the next whole second) the pattern matches in the zone, in
 * milliseconds, or `undefined` when none comes within five years (the server refuses it), found
 * as the server finds it: each field from the month down moved on until it matches, a field
 * wrapping around starting over from the month.
 */
export function nextCron(pattern: CronPattern, zone: CronZone, ms: number): number | undefined {
  // A field with no value never matches: the search would run its five years to say so.
  if (Object.values(pattern).some((bits) => (bits & ~STAR) === 0n)) return undefined;
  let next = Math.floor(ms / 1000) * 1000 + 1000;
  let truncated = false;
  const yearLimit = zone.fields(next).year + 5;
  wrap: for (;;) {
    let t = zone.fields(next);
    if (t.year > yearLimit) return undefined;
    while (!has(pattern.months, t.month)) {
      if (!truncated) {
        truncated = true;
        t = zone.fields(zone.at(t.year, t.month, 1, 0, 0, 0));
      }
      next = zone.at(t.year, t.month + 1, t.day, t.hour, t.minute, t.second);
      t = zone.fields(next);
      if (t.month === 1) continue wrap;
    }
    while (!dayMatches(pattern, t)) {
      if (!truncated) {
        truncated = true;
        t = zone.fields(zone.at(t.year, t.month, t.day, 0, 0, 0));
      }
      next = zone.at(t.year, t.month, t.day + 1, t.hour, t.minute, t.second);
      t = zone.fields(next);
      if (t.day === 1) continue wrap;
    }
    while (!has(pattern.hours, t.hour)) {
      if (!truncated) {
        truncated = true;
        next = zone.at(t.year, t.month, t.day, t.hour, 0, 0);
      }
      // Whole hours of elapsed time, not of the wall clock, as the server adds them.
      next += 3_600_000;
      t = zone.fields(next);
      if (t.hour === 0) continue wrap;
    }
    while (!has(pattern.minutes, t.minute)) {
      if (!truncated) {
        truncated = true;
        next -= next % 60_000;
      }
      next += 60_000;
      t = zone.fields(next);
      if (t.minute === 0) continue wrap;
    }
    while (!has(pattern.seconds, t.second)) {
      if (!truncated) truncated = true;
      next += 1000;
      t = zone.fields(next);
      if (t.second === 0) continue wrap;
    }
    return next;
  }
}
