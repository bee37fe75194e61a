// A transactional queue's promise, read from the server: the handler's business row commits with
// its row's ack, so every acked row has exactly one business row, and no business row exists for a
// row that is not acked. The runner creates the business table; the services write it.
import type pg from "pg";
import type { Handled } from "../checker.js";
import { POSTGRES_BUSINESS_TABLE, POSTGRES_TABLE } from "../service/brokerBounds.js";
import type { Verdict } from "./target.js";

/** No unique key: a business row committed twice is two rows, which the checks count. */
export async function ensureBusinessTable(client: pg.Client): Promise<void> {
  await client.query(`CREATE TABLE IF NOT EXISTS ${POSTGRES_BUSINESS_TABLE} (
  id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  queue  text    NOT NULL,
  row_id bigint  NOT NULL,
  k      text    NOT NULL,
  seq    integer NOT NULL
)`);
  await client.query(
    `CREATE INDEX IF NOT EXISTS ${POSTGRES_BUSINESS_TABLE}_queue ON ${POSTGRES_BUSINESS_TABLE} (queue, row_id)`,
  );
}

interface QueueRow {
  readonly k: string;
  readonly seq: number;
  readonly done: boolean;
}

interface BusinessRow {
  readonly id: string;
  readonly rowId: string;
  readonly k: string;
  readonly seq: number;
}

/** The queue's rows (each message's key and seq from its payload, and whether it was acked). */
export interface BusinessState {
  readonly rows: ReadonlyMap<string, QueueRow>;
  readonly business: readonly BusinessRow[];
}

export async function readBusinessState(client: pg.Client, queue: string): Promise<BusinessState> {
  const queued = await client.query<{ id: string; done: boolean; k: string; s: number }>(
    `SELECT id, done_at IS NOT NULL AS done, body->>'k' AS k, (body->>'s')::integer AS s
       FROM (SELECT id, done_at, convert_from(payload, 'UTF8')::jsonb AS body
               FROM ${POSTGRES_TABLE} WHERE queue = $1) AS q`,
    [queue],
  );
  const written = await client.query<{ id: string; row_id: string; k: string; seq: number }>(
    `SELECT id, row_id, k, seq FROM ${POSTGRES_BUSINESS_TABLE} WHERE queue = $1 ORDER BY id`,
    [queue],
  );
  return {
    rows: new Map(queued.rows.map((r) => [r.id, { k: r.k, seq: r.s, done: r.done }])),
    business: written.rows.map((b) => ({ id: b.id, rowId: b.row_id, k: b.k, seq: b.seq })),
  };
}

/** Whether every row of the queue was acked, and there are at least `expected`. */
export async function allAcked(
  client: pg.Client,
  queue: string,
  expected: number,
): Promise<boolean> {
  const { rows } = await client.query<{ total: string; undone: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE done_at IS NULL) AS undone
       FROM ${POSTGRES_TABLE} WHERE queue = $1`,
    [queue],
  );
  const counts = rows[0];
  return counts !== undefined && Number(counts.total) >= expected && Number(counts.undone) === 0;
}

/**
 * The business rows as outputs, one per commit, in the order they were written (the business
 * row's id, taken by the insert). A message the runner published twice (a publish unconfirmed for
 * 5 s and sent again) is two rows with a business row each: only its first row's count here, the
 * other's stands in the per-row check.
 */
export function businessOutputs(state: BusinessState): Handled[] {
  const firstRowOf = new Map<number, string>();
  for (const [id, row] of state.rows) {
    const first = firstRowOf.get(row.seq);
    if (first === undefined || BigInt(id) < BigInt(first)) firstRowOf.set(row.seq, id);
  }
  return state.business
    .filter((b) => !state.rows.has(b.rowId) || firstRowOf.get(b.seq) === b.rowId)
    .map((b) => ({ key: b.k, seq: b.seq, at: Number(b.id) }));
}

/** The per-row check: each acked row's business row exactly once, none for a row not acked. */
export function businessVerdict(state: BusinessState): Verdict {
  const perRow = new Map<string, BusinessRow[]>();
  for (const b of state.business) {
    const of = perRow.get(b.rowId);
    if (of === undefined) perRow.set(b.rowId, [b]);
    else of.push(b);
  }
  const withoutAck: string[] = [];
  const mismatched: string[] = [];
  const twice: string[] = [];
  for (const [rowId, written] of perRow) {
    const row = state.rows.get(rowId);
    if (row === undefined || !row.done) withoutAck.push(rowId);
    else if (written.some((b) => b.k !== row.k || b.seq !== row.seq)) mismatched.push(rowId);
    if (written.length > 1) twice.push(rowId);
  }
  const ackedWithout: string[] = [];
  let acked = 0;
  let undone = 0;
  for (const [id, row] of state.rows) {
    if (!row.done) undone++;
    else {
      acked++;
      if (!perRow.has(id)) ackedWithout.push(id);
    }
  }
  const first = (ids: readonly string[]) => ids.slice(0, 10).join(", ");
  const failures: string[] = [];
  if (withoutAck.length > 0)
    failures.push(
      `${withoutAck.length} business rows of rows not acked (row ids: ${first(withoutAck)})`,
    );
  if (ackedWithout.length > 0)
    failures.push(
      `${ackedWithout.length} acked rows without their business row (row ids: ${first(ackedWithout)})`,
    );
  if (twice.length > 0)
    failures.push(`${twice.length} rows whose business row was committed twice (${first(twice)})`);
  if (mismatched.length > 0)
    failures.push(
      `${mismatched.length} business rows not of their row's message (row ids: ${first(mismatched)})`,
    );
  const seqs = new Set([...state.rows.values()].map((r) => r.seq));
  return {
    failures,
    notes: [
      `queue rows ${state.rows.size} (${state.rows.size - seqs.size} published twice), acked ${acked}, not acked ${undone}; business rows ${state.business.length}`,
    ],
  };
}
