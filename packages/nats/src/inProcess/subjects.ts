/** Whether `subject` matches `pattern` as NATS matches them: `*` one token, `>` one or more at the end. */
export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    const token = p[i];
    if (token === ">") return s.length > i;
    if (i >= s.length) return false;
    if (token !== "*" && token !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Whether two patterns can match one subject (a stream's subjects may not overlap another's). */
export function subjectsOverlap(a: string, b: string): boolean {
  const x = a.split(".");
  const y = b.split(".");
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const p = x[i];
    const q = y[i];
    if (p === ">" || q === ">") return p !== undefined && q !== undefined;
    if (p === undefined || q === undefined) return false;
    if (p !== "*" && q !== "*" && p !== q) return false;
  }
  return true;
}
