import type { QueueTable } from "../table.js";

/**
 * How many ready rows, per row a claim asks for, the key-ordered claim walks in the claim's order
 * looking for the keys' heads before it asks every key for its head instead: enough that a queue
 * whose heads are ready finds them in the walk, few enough that a backlog of rows waiting behind
 * their heads costs a bounded walk, not one probe per row.
 */
export const walkPerRow = 8;

/**
 * How many keys the claim asks for their heads at most when the walk found too few: past that, it
 * walks every ready row with a key instead (the cost of the claim before keys were asked), so a
 * backlog over more keys than this costs no more than that walk.
 */
export const keysAsked = 1024;

/**
 * The claim's two statements: without per-key order, the ready rows in the claim's order; with
 * it, the keys' heads and the ready rows behind them. Both take `$1` queue, `$2` max, `$3` lease,
 * `$4` lease ms; the key-ordered one also `$5` and `$7` the ids and leases of the claimant's own
 * rows (those it has in work) and `$6` rows per key. Both answer each row with `pos`, its place in
 * the claim (UPDATE ... RETURNING keeps no order).
 */
export function claimStatements(t: QueueTable, after: (n: number) => string) {
  const ready = (q: string) =>
    `${q}.run_at <= now() AND (${q}.locked_until IS NULL OR ${q}.locked_until <= now())`;
  // One of the claimant's rows in work, under its live lease. Matched by id and by lease apart (a
  // row the claimant holds is under one lease of its own, and no lease of another claimant is
  // among its leases): two scalar array tests, as cheap per row as the lease test alone was.
  const own = (q: string) =>
    `COALESCE(${q}.id = ANY($5::bigint[]) AND ${q}.lease = ANY($7::uuid[]) AND ${q}.locked_until > now(), false)`;
  // No earlier undone row of the row's key but the claimant's own: a subquery run per row (with
  // LIMIT, so the planner keeps it a probe of the key index, never a join over the queue's rows,
  // even on a table without statistics yet). The lateral reads below are per row for the same
  // reason.
  const noneBefore = (q: string) => `(SELECT 1 FROM ${t.sql} AS h
      WHERE h.queue = $1 AND h.partition_key = ${q}.partition_key AND h.done_at IS NULL
        AND h.id < ${q}.id AND NOT ${own("h")} LIMIT 1) IS NULL`;
  const lease = (
    picked: string,
  ) => `UPDATE ${t.sql} AS q SET attempts = q.attempts + 1, lease = $3::uuid, locked_until = ${after(4)}
FROM ${picked} WHERE q.id = ${picked}.id
RETURNING q.id::text AS id, ${picked}.pos, q.queue, q.payload, q.header_names, q.header_values,
  q.partition_key, q.priority, q.attempts, q.dead_source, q.dead_reason, q.dead_attempts,
  EXTRACT(EPOCH FROM (clock_timestamp() - q.run_at)) * 1000 AS waited_ms`;
  return {
    plain: `WITH locked AS (
  SELECT q.id, q.priority, q.run_at FROM ${t.sql} AS q
  WHERE q.queue = $1 AND q.done_at IS NULL AND ${ready("q")}
  ORDER BY q.priority DESC, q.run_at, q.id
  LIMIT $2
  FOR UPDATE SKIP LOCKED),
picked AS (SELECT id, row_number() OVER (ORDER BY priority DESC, run_at, id) AS pos FROM locked)
${lease("picked")}`,
    /*
     * A key's head is its oldest undone row that is not the claimant's own (held under one of its
     * live leases); it is claimable when ready, and so are the ready rows right behind it (up to
     * `$6`), in id order. The claim's leaders are its heads and its keyless ready rows; only the
     * first `$2` leaders in the claim's order (priority, run time, id) can bring a row, so only
     * those are expanded. A row behind a head takes its place in the claim after every row before
     * it in its key (its `reach`: the latest place among them), so a claim cut at `$2` takes a
     * prefix of each key. The heads come from a walk of the first `$2 * walkPerRow` ready rows
     * when that walk saw every ready row or `$2` leaders: read only as far as its `$2`-th leader
     * (the leaders after it rank after it, and every keyless row the walk did not reach ranks after
     * the walk's), so a queue whose first ready rows lead reads `$2` rows, not the whole walk
     * (`walked` takes the walk's rows in the order the walk made them, which a CTE's scan keeps, and
     * `complete` counts the rest of the walk only when `walked` came short); else from every key's oldest undone
     * row (one index probe per key, a loose index scan on the key index; one more for a key whose
     * oldest rows the claimant holds), or, past `keysAsked` keys, from a walk of every ready row
     * with a key. Rows another claim locked meanwhile are skipped, and so is every row behind one
     * of them in its key.
     */
    keyOrdered: `WITH RECURSIVE walk AS (
  SELECT q.id, q.partition_key, q.priority, q.run_at FROM ${t.sql} AS q
  WHERE q.queue = $1 AND q.done_at IS NULL AND ${ready("q")}
  ORDER BY q.priority DESC, q.run_at, q.id
  LIMIT $2::integer * ${walkPerRow}),
walked AS (
  SELECT w.id, w.partition_key, w.priority, w.run_at FROM walk AS w
  WHERE w.partition_key IS NULL OR ${noneBefore("w")}
  LIMIT $2),
complete AS (
  SELECT (SELECT count(*) FROM walked) >= $2
    OR (SELECT count(*) FROM walk) < $2::integer * ${walkPerRow} AS yes),
keys AS (
  (SELECT q.partition_key, q.id, ${own("q")} AS own, ${ready("q")} AS ready, 1 AS n FROM ${t.sql} AS q
   WHERE q.queue = $1 AND q.done_at IS NULL AND q.partition_key IS NOT NULL
     AND NOT (SELECT yes FROM complete)
   ORDER BY q.partition_key, q.id LIMIT 1)
  UNION ALL
  SELECT x.*, k.n + 1 FROM keys AS k CROSS JOIN LATERAL (
    SELECT q.partition_key, q.id, ${own("q")} AS own, ${ready("q")} AS ready FROM ${t.sql} AS q
    WHERE q.queue = $1 AND q.done_at IS NULL AND q.partition_key IS NOT NULL
      AND q.partition_key > k.partition_key
    ORDER BY q.partition_key, q.id LIMIT 1) AS x
  WHERE k.n < ${keysAsked}),
enumerated AS (
  SELECT k.id FROM keys AS k WHERE NOT k.own AND k.ready
  UNION ALL
  SELECT f.id FROM keys AS k CROSS JOIN LATERAL (
    SELECT q.id, q.run_at, q.locked_until FROM ${t.sql} AS q
    WHERE q.queue = $1 AND q.partition_key = k.partition_key AND q.done_at IS NULL AND q.id > k.id
      AND NOT ${own("q")}
    ORDER BY q.id LIMIT 1) AS f
  WHERE k.own AND ${ready("f")}),
searched AS (
  SELECT q.id FROM ${t.sql} AS q
  WHERE (SELECT count(*) FROM keys) >= ${keysAsked}
    AND q.queue = $1 AND q.done_at IS NULL AND q.partition_key IS NOT NULL AND ${ready("q")}
    AND ${noneBefore("q")}
  ORDER BY q.priority DESC, q.run_at, q.id
  LIMIT $2),
leaders AS (
  SELECT l.id, l.partition_key, l.priority, l.run_at FROM (
    SELECT w.id, w.partition_key, w.priority, w.run_at FROM walked AS w
    UNION
    SELECT q.id, q.partition_key, q.priority, q.run_at
    FROM (SELECT id FROM enumerated UNION SELECT id FROM searched) AS h
    CROSS JOIN LATERAL (SELECT q.* FROM ${t.sql} AS q WHERE q.id = h.id LIMIT 1) AS q
    UNION
    (SELECT q.id, q.partition_key, q.priority, q.run_at FROM ${t.sql} AS q
     WHERE NOT (SELECT yes FROM complete)
       AND q.queue = $1 AND q.done_at IS NULL AND q.partition_key IS NULL AND ${ready("q")}
     ORDER BY q.priority DESC, q.run_at, q.id LIMIT $2)) AS l
  ORDER BY l.priority DESC, l.run_at, l.id LIMIT $2),
candidates AS (
  SELECT l.id, l.partition_key, l.priority, l.run_at FROM leaders AS l WHERE l.partition_key IS NULL
  UNION ALL
  SELECT r.id, r.partition_key, r.priority, r.run_at FROM leaders AS l CROSS JOIN LATERAL (
    SELECT s.*, bool_and(s.ready) OVER (ORDER BY s.id) AS unbroken FROM (
      SELECT q.id, q.partition_key, q.priority, q.run_at, ${ready("q")} AS ready FROM ${t.sql} AS q
      WHERE q.queue = $1 AND q.partition_key = l.partition_key AND q.done_at IS NULL AND q.id >= l.id
      ORDER BY q.id LIMIT $6) AS s) AS r
  WHERE l.partition_key IS NOT NULL AND r.unbroken),
ranked AS (
  SELECT c.id, c.partition_key, row_number() OVER (ORDER BY c.priority DESC, c.run_at, c.id) AS place
  FROM candidates AS c),
reaching AS (
  SELECT r.id, r.partition_key, CASE WHEN r.partition_key IS NULL THEN r.place
    ELSE max(r.place) OVER (PARTITION BY r.partition_key ORDER BY r.id) END AS reach
  FROM ranked AS r),
chosen AS (SELECT id, partition_key, reach FROM reaching ORDER BY reach, id LIMIT $2),
locked AS (
  SELECT l.id FROM chosen AS c CROSS JOIN LATERAL (
    SELECT q.id FROM ${t.sql} AS q
    WHERE q.id = c.id AND q.queue = $1 AND q.done_at IS NULL AND ${ready("q")}
    FOR UPDATE SKIP LOCKED) AS l),
picked AS (
  SELECT x.id, x.pos FROM (
    SELECT c.id, c.partition_key, l.id IS NOT NULL AS got,
      row_number() OVER (ORDER BY c.reach, c.id) AS pos,
      bool_and(l.id IS NOT NULL) OVER (PARTITION BY c.partition_key ORDER BY c.id) AS unbroken
    FROM chosen AS c LEFT JOIN locked AS l ON l.id = c.id) AS x
  WHERE x.got AND (x.partition_key IS NULL OR x.unbroken))
${lease("picked")}`,
  };
}
