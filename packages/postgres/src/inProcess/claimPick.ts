import type { Claim } from "../client/store.js";

/** What a claim reads of an undone row. */
export interface ClaimableRow {
  readonly id: bigint;
  readonly partitionKey: Uint8Array | undefined;
  readonly priority: number;
  readonly runAt: number;
  readonly lease: string | undefined;
  readonly lockedUntil: number | undefined;
}

/**
 * The rows a claim takes of a queue's undone rows, in the claim's order: the answer of
 * `client/claimStatements.ts`, computed over every row at once (the SQL narrows its reads to the
 * few keys that can bring a row, with the same answer).
 */
export function claimPick<R extends ClaimableRow>(
  undone: readonly R[],
  claim: Claim,
  now: number,
): R[] {
  const ready = (r: R) => r.runAt <= now && (r.lockedUntil === undefined || r.lockedUntil <= now);
  if (!claim.keyOrder) return undone.filter(ready).sort(claimOrder).slice(0, claim.max);
  const own = new Map(claim.own.map((h) => [h.id, h.lease] as const));
  const ours = (r: R) =>
    r.lease !== undefined && own.get(r.id) === r.lease && (r.lockedUntil ?? 0) > now;
  const keys = new Map<string, R[]>();
  const candidates: R[] = [];
  for (const r of undone) {
    if (r.partitionKey === undefined) {
      if (ready(r)) candidates.push(r);
      continue;
    }
    const key = Buffer.from(r.partitionKey).toString("hex");
    const rows = keys.get(key);
    if (rows === undefined) keys.set(key, [r]);
    else rows.push(r);
  }
  // Per key: its head (the oldest undone row not the claimant's own) and the ready rows right
  // behind it, while each is ready, `perKey` at most.
  const perKey = Math.min(claim.perKey, claim.max);
  const runs: R[][] = [];
  for (const rows of keys.values()) {
    rows.sort(byId);
    const head = rows.findIndex((r) => !ours(r));
    if (head < 0) continue;
    const run: R[] = [];
    for (const r of rows.slice(head, head + perKey)) {
      if (!ready(r)) break;
      run.push(r);
    }
    runs.push(run);
    candidates.push(...run);
  }
  // Each row's place in the claim's order; a row of a key goes no earlier than any row before it
  // in its key (its reach), so a claim cut at `max` takes a prefix of each key.
  const place = new Map(candidates.sort(claimOrder).map((r, i) => [r, i] as const));
  const reach = new Map<R, number>();
  for (const r of candidates) if (r.partitionKey === undefined) reach.set(r, place.get(r) ?? 0);
  for (const run of runs) {
    let latest = -1;
    for (const r of run) {
      latest = Math.max(latest, place.get(r) ?? 0);
      reach.set(r, latest);
    }
  }
  return candidates
    .sort((a, b) => (reach.get(a) ?? 0) - (reach.get(b) ?? 0) || byId(a, b))
    .slice(0, claim.max);
}

/** The claim's order: priority (higher first), then run time, then id. */
function claimOrder(a: ClaimableRow, b: ClaimableRow): number {
  return b.priority - a.priority || a.runAt - b.runAt || byId(a, b);
}

function byId(a: ClaimableRow, b: ClaimableRow): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
