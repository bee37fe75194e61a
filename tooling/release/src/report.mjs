// @ts-check
// What the rehearsal found: every check with its outcome, printed as it happens and again as the
// closing summary, and the figures (sizes, counts, times) the release notes want.

/** @typedef {{ where: string, what: string, ok: boolean, detail: string, fix: string }} Check */

export class Report {
  /** @type {Check[]} */
  checks = [];
  /** @type {string[]} */
  figures = [];
  /** @type {{ what: string, why: string }[]} */
  skipped = [];

  /**
   * Records one check. A failing one says why (`detail`) and what to do (`fix`).
   * @param {string} where the step or install it belongs to
   * @param {string} what what was checked
   * @param {boolean} ok
   * @param {string} [detail]
   * @param {string} [fix]
   */
  check(where, what, ok, detail = "", fix = "") {
    this.checks.push({ where, what, ok, detail, fix });
    say(
      `${ok ? "ok  " : "FAIL"} ${where}: ${what}${detail && (!ok || detail.length < 120) ? ` (${ok ? detail : firstLine(detail)})` : ""}`,
    );
    if (!ok && detail.includes("\n")) process.stdout.write(`${detail}\n`);
    return ok;
  }

  /** A step that did not run, and why: printed, never counted as passed. */
  skip(/** @type {string} */ what, /** @type {string} */ why) {
    this.skipped.push({ what, why });
    say(`skip ${what}: ${why}`);
  }

  /** A figure for the summary, as "where: text". */
  figure(/** @type {string} */ line) {
    this.figures.push(line);
    say(line);
  }

  get failed() {
    return this.checks.filter((check) => !check.ok);
  }

  /** The closing summary: the figures, then every failed check with its fix, then the tally. */
  summary(/** @type {number} */ ms) {
    const out = ["", "[release] ===== summary ====="];
    for (const line of this.figures) out.push(`[release] ${line}`);
    for (const { what, why } of this.skipped) out.push(`[release] skipped ${what}: ${why}`);
    const failed = this.failed;
    if (failed.length > 0) out.push("[release] failed checks:");
    // One line per failure that several packages or installs share, naming each of them.
    /** @type {Map<string, Check[]>} */
    const alike = new Map();
    for (const check of failed) {
      const key = `${check.what}\n${firstLine(check.detail)}`;
      alike.set(key, [...(alike.get(key) ?? []), check]);
    }
    for (const checks of alike.values()) {
      const [first] = checks;
      if (first === undefined) continue;
      const wheres = checks.map((check) => check.where).join(", ");
      out.push(`[release]   ${first.what}: ${firstLine(first.detail)}`);
      out.push(`[release]     in ${wheres}`);
      if (first.fix) out.push(`[release]     fix: ${first.fix}`);
    }
    out.push(
      `[release] ${this.checks.length - failed.length} passed, ${failed.length} failed (checks), in ${(ms / 1000).toFixed(0)} s`,
    );
    return `${out.join("\n")}\n`;
  }
}

/** Prints a line of the rehearsal's own, told apart from the tools' output. */
export function say(/** @type {string} */ line) {
  process.stdout.write(`[release] ${line}\n`);
}

function firstLine(/** @type {string} */ text) {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
