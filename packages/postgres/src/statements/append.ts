// The patch-free turn as one plain statement, the shape of a hand-written turn: the UPDATE
// of the session row guarded by the expectations and by the counters' ranges (the checks
// of sk_commit), then INSERTs of the message rows and of the pending search rows, tagged
// with the session's search epoch. Each body and each search row is a plain parameter of
// its own (an array parameter would be parsed character by character first), so the text
// depends on how many there are: turns of a few messages use a prepared statement per
// shape, larger commits an unnamed one.
import type { StoredCounters } from '../counters.js';
import { forgetsAt, forgottenBy } from '../migrations/010-operations-one-index.js';
import type { SearchChunks } from '../search-rows.js';
import { type Sql, sql } from '../sql.js';
import type { AppendRow, FunctionParam } from './commit.js';

/** What the append statement is asked to do. */
export interface AppendArgs {
  id: string;
  expectedRevision?: number | undefined;
  expectedMessageCount?: number | undefined;
  /** The write's time; the stored `updatedAt` becomes max(now, stored + 1 ms). */
  now: Date;
  bodies: string[];
  /** The pending search rows of the new messages (offsets relative to the first one). */
  search: SearchChunks;
  incTokens?: number | undefined;
  incCost?: number | undefined;
  incTurns?: number | undefined;
  /** The commit's operation id: checked first, recorded with the result (schema version 8). */
  operationId?: string | undefined;
}

/**
 * The fixed parameters, `$1` … `$7` in this order; then, for a statement with an operation
 * id, the id (`text`); then one `text` per body, then `(integer first offset, integer next
 * offset, text)` per search row.
 */
export const APPEND_PARAMS: readonly FunctionParam<AppendArgs>[] = [
  { name: 'p_id', type: 'text', value: (a) => a.id },
  { name: 'p_expected_rev', type: 'bigint', value: (a) => a.expectedRevision ?? null },
  // bigint: an expectation may be any safe integer (one past the integer range simply fails).
  { name: 'p_expected_count', type: 'bigint', value: (a) => a.expectedMessageCount ?? null },
  { name: 'p_now', type: 'timestamp with time zone', value: (a) => a.now },
  { name: 'p_inc_tokens', type: 'bigint', value: (a) => a.incTokens ?? null },
  { name: 'p_inc_cost', type: 'double precision', value: (a) => a.incCost ?? null },
  { name: 'p_inc_turns', type: 'bigint', value: (a) => a.incTurns ?? null },
];

/** Shapes up to these counts get a prepared statement of their own. */
const PREPARED_BODIES = 8;
const PREPARED_SEARCH_ROWS = 2;

/** `name` of the fixed parameters as `$n::type` (an unknown name throws when the text is built). */
function fixed(name: string): string {
  const i = APPEND_PARAMS.findIndex((p) => p.name === name);
  if (i < 0) throw new Error(`no parameter ${name}`);
  return `$${i + 1}::${APPEND_PARAMS[i]!.type}`;
}

/**
 * The append statement of schema `s` for `bodies` messages and `searchRows` pending search
 * rows; `named`: the commit has an operation id. No row when the UPDATE matched nothing (the
 * caller reads why with `appendRefusal`, which also finds an id recorded before). With an
 * operation id, the id is recorded with the result in the same statement, and every
 * `FORGET_OPERATIONS_EVERY`-th named commit also forgets the session's ids past its last
 * 1,000 (schema version 10). An id already recorded (a retry, or two commits naming one id
 * at once) fails the INSERT on the `operations` key (23505): the statement writes nothing,
 * and the caller reads the recorded result (`operation`, statements/commit.ts). The id is
 * not probed first: a probe cost every named turn ~17 µs of server CPU (a CTE, an InitPlan
 * and a UNION) to save a failed statement on a replay, which only a retry makes.
 */
export function appendStatementSql(
  s: string,
  bodies: number,
  searchRows: number,
  named = false,
): string {
  let next = APPEND_PARAMS.length;
  const param = (type: string) => `$${++next}::${type}`;
  const op = named ? param('text') : '';
  const bodyRows = Array.from({ length: bodies }, (_, i) => `(${i}, ${param('text')})`);
  const searchTuples = Array.from(
    { length: searchRows },
    () => `(${param('integer')}, ${param('integer')}, ${param('text')})`,
  );
  const base = `s.message_count - ${bodies}`;
  const parts: string[] = [];
  parts.push(
    `s AS (
  UPDATE ${s}.sessions AS s SET
    token_count = s.token_count + coalesce(${fixed('p_inc_tokens')}, 0),
    cost_usd = CASE WHEN coalesce(${fixed('p_inc_cost')}, 0) = 0 THEN s.cost_usd
      ELSE s.cost_usd + ${fixed('p_inc_cost')} END,
    turn_count = s.turn_count + coalesce(${fixed('p_inc_turns')}, 0),
    message_count = s.message_count + ${bodies},
    revision = s.revision + 1,
    updated_at = greatest(${fixed('p_now')}, s.updated_at + interval '1 millisecond')${named ? ',\n    operation_count = s.operation_count + 1' : ''}
  WHERE s.id = ${fixed('p_id')}
    AND (${fixed('p_expected_rev')} IS NULL OR s.revision = ${fixed('p_expected_rev')})
    AND (${fixed('p_expected_count')} IS NULL OR s.message_count = ${fixed('p_expected_count')})
    AND (${fixed('p_inc_tokens')} IS NULL OR ${s}.sk_count_ok(s.token_count + ${fixed('p_inc_tokens')}))
    AND (${fixed('p_inc_turns')} IS NULL OR ${s}.sk_count_ok(s.turn_count + ${fixed('p_inc_turns')}))
    AND ${s}.sk_cost_ok(s.cost_usd, ${fixed('p_inc_cost')})
  RETURNING s.id, s.revision, s.message_count, s.updated_at, s.search_epoch${named ? ', s.operation_count' : ''}
)`,
  );
  if (named) {
    parts.push(`o AS (
  INSERT INTO ${s}.operations (session_id, operation_id, n, revision, message_count, updated_at)
  SELECT s.id, ${op}, s.operation_count, s.revision, s.message_count, s.updated_at FROM s
), f AS (
  DELETE FROM ${s}.operations AS o USING s
  WHERE ${forgetsAt('s.operation_count')} AND o.session_id = s.id
    AND ${forgottenBy('s.operation_count')}
)`);
  }
  if (bodies > 0) {
    parts.push(`m AS (
  INSERT INTO ${s}.messages (session_id, seq, body)
  SELECT s.id, ${base} + v.o, v.b FROM s, (VALUES ${bodyRows.join(', ')}) AS v(o, b)
)`);
  }
  if (searchRows > 0) {
    parts.push(`p AS (
  INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
  SELECT s.id, ${base} + v.o, ${base} + v.e, s.search_epoch, v.t
  FROM s, (VALUES ${searchTuples.join(', ')}) AS v(o, e, t)
)`);
  }
  const counters = `NULL::bigint AS token_count, NULL::double precision AS cost_usd,
  NULL::bigint AS turn_count`;
  return `WITH ${parts.join(', ')}
SELECT 'ok' AS code, s.revision, s.message_count, s.updated_at,
  ${counters}
FROM s`;
}

/** The values of the append statement for `args`, in `$n` order. */
export function appendValues(args: AppendArgs): unknown[] {
  const values = APPEND_PARAMS.map((p) => p.value(args));
  if (args.operationId !== undefined) values.push(args.operationId);
  values.push(...args.bodies);
  const { seqs, nexts, texts } = args.search;
  for (let i = 0; i < seqs.length; i++) values.push(seqs[i], nexts[i], texts[i]);
  return values;
}

/** What an append that wrote nothing finds: the session's revision, count and counters. */
export interface RefusalRow extends StoredCounters {
  revision: string;
  message_count: number;
  /** The result recorded for the commit's operation id meanwhile (null: none). */
  op_revision: string | null;
  op_message_count: number | null;
  op_updated_at: Date | null;
}

/**
 * The append statements of schema `s` by shape (`tag` names the prepared ones), and the
 * read of why one wrote nothing.
 */
export function appendStatements(s: string, tag: string) {
  const prepared = new Map<string, Sql<AppendRow>>();
  return {
    /**
     * The statement for a turn of `bodies` messages and `searchRows` pending search rows;
     * `named`: with an operation id.
     */
    append(bodies: number, searchRows: number, named = false): Sql<AppendRow> {
      if (bodies > PREPARED_BODIES || searchRows > PREPARED_SEARCH_ROWS) {
        return sql<AppendRow>(appendStatementSql(s, bodies, searchRows, named));
      }
      const key = `${bodies}_${searchRows}${named ? '_o' : ''}`;
      let statement = prepared.get(key);
      if (statement === undefined) {
        statement = sql<AppendRow>(
          appendStatementSql(s, bodies, searchRows, named),
          `sk_append_${tag}_${key}`,
        );
        prepared.set(key, statement);
      }
      return statement;
    },

    /**
     * $1 id, $2 operation id (null: none): what the append that wrote nothing met, and the
     * result recorded for the id (no row: the session does not exist).
     */
    appendRefusal: sql<RefusalRow>(
      `SELECT x.revision, x.message_count, x.token_count, x.cost_usd, x.turn_count,
  o.revision AS op_revision, o.message_count AS op_message_count, o.updated_at AS op_updated_at
FROM ${s}.sessions AS x LEFT JOIN ${s}.operations AS o
  ON o.session_id = x.id AND o.operation_id = $2::text
WHERE x.id = $1`,
    ),
  };
}
