import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cronZone, nextCron, readCron } from "../src/inProcess/standInCron.js";

// The stand-in's cron against the server's: `fixtures/serverCron.tsv` holds, for each pattern, zone
// and time, the next time the server's own cron code (nats-server's parseCron, with its predefined
// patterns, run on these inputs in Go with its zone database) answers, or `-` where it refuses the
// pattern: ranges, steps, names, `?`, the two day fields' rule, DST changes skipped or repeated
// (Europe/Berlin, America/New_York, Lord Howe's half hour), leap years, and the refusals (five or
// seven fields, Sunday as 7, `L`, out of range, no time in five years, `@every` with no interval).

const fixture = new URL("./fixtures/serverCron.tsv", import.meta.url);
const rows = readFileSync(fixture, "utf8")
  .trim()
  .split("\n")
  .map((line) => {
    const [pattern = "", zone = "", from = "", next = ""] = line.split("\t");
    return { pattern: JSON.parse(pattern) as string, zone, from, next };
  });

describe("the stand-in's cron patterns", () => {
  it("the fixture covers patterns the server runs and patterns it refuses, in several zones", () => {
    expect(rows.length).toBeGreaterThan(200);
    expect(rows.filter((r) => r.next === "-").length).toBeGreaterThan(15);
    expect(new Set(rows.map((r) => r.zone)).size).toBe(5);
  });

  it.each(rows)("$pattern in $zone after $from: $next", ({ pattern, zone, from, next }) => {
    const read = readCron(pattern);
    const where = cronZone(zone);
    expect(where).toBeDefined();
    const at =
      read === undefined || where === undefined
        ? undefined
        : nextCron(read, where, Date.parse(from));
    expect(at === undefined ? "-" : where?.format(at)).toBe(next);
  });

  it("a zone is read as the server loads one: an IANA name as spelled, Local; not another case, an offset or an unknown name", () => {
    for (const name of ["UTC", "Europe/Berlin", "Etc/GMT+1", "US/Pacific", "EST", "Local"])
      expect(cronZone(name), name).toBeDefined();
    for (const name of ["europe/berlin", "asia/calcutta", "utc", "+01:00", "Nowhere/Atlantis", ""])
      expect(cronZone(name), name).toBeUndefined();
  });
});
