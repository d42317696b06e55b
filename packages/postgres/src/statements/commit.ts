// The turn writes: the patch-free turn as one plain statement (`append`, built here: the
// revision check, the message rows and the pending search row in one CTE, the shape of a
// hand-written turn), and commits with a patch or a replace through the server-side
// function `sk_commit` (its SQL: migrations/006-search-blocks.ts). Both are built from one
// ordered table of parameters — name, SQL type, the value the store passes, what it
// means —: the function is called in named notation (`p_id => $1::text`) and the statement
// refers to its parameters by name, so neither can drift from its values silently;
// test/commit-statements.test.ts compares `COMMIT_PARAMS` with the signature in `pg_proc`.
import type { CommitInput } from '@sessionkit/core';
import type { StoredCounters } from '../counters.js';
import type { SearchChunks } from '../search-rows.js';
import { type Sql, sql } from '../sql.js';

/** What `sk_commit` is asked to do; every field maps to parameters in `COMMIT_PARAMS`. */
export interface CommitArgs {
  id: string;
  /** The commit's input (for core's out-of-range error); absent for save. */
  input?: CommitInput<unknown> | undefined;
  expectedRevision?: number | undefined;
  expectedMessageCount?: number | undefined;
  /** The write's time; the stored `updatedAt` becomes max(now, stored + 1 ms). */
  now: Date;
  replace: boolean;
  /** Whether the write rewrites the history (core's committedLineage / savedLineage). */
  rewrite: boolean;
  bodies: string[];
  search: SearchChunks;
  title?: string | undefined;
  /** Whether a patched title gets a search row (false under search scope `none`). Default true. */
  indexTitle?: boolean | undefined;
  folder?: string | undefined;
  status?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  tokenCount?: number | undefined;
  costUsd?: number | undefined;
  turnCount?: number | undefined;
  metaReplace: boolean;
  metaSet?: string | null | undefined;
  metaDel?: string[] | null | undefined;
  stateSet: boolean;
  state?: string | null | undefined;
  archivedSet: boolean;
  archived?: Date | null | undefined;
  modeSet: boolean;
  mode?: string | null | undefined;
  incTokens?: number | undefined;
  incCost?: number | undefined;
  incTurns?: number | undefined;
  wantHeader: boolean;
}

/** What the `append` statement is asked to do (the patch-free turn). */
export interface AppendArgs {
  id: string;
  expectedRevision?: number | undefined;
  expectedMessageCount?: number | undefined;
  now: Date;
  bodies: string[];
  search: SearchChunks;
  incTokens?: number | undefined;
  incCost?: number | undefined;
  incTurns?: number | undefined;
}

/**
 * One IN parameter of a server-side function: its name and SQL type exactly as
 * `pg_proc` / `format_type` spell them, and the value the store passes for it.
 */
export interface FunctionParam<A> {
  name: string;
  type: string;
  value(args: A): unknown;
}

/** The result codes of sk_commit and of the `append` statement. */
export type CommitCode =
  | 'ok'
  | 'not_found'
  | 'conflict_revision'
  | 'conflict_count'
  | 'out_of_range';

/** The row of the `append` statement (sk_commit's first columns). */
export interface AppendRow extends StoredCounters {
  code: CommitCode;
  revision: string | null;
  message_count: number | null;
  updated_at: Date | null;
}

/** The row `sk_commit` returns (its OUT parameters); the header part only with `p_want_header`. */
export interface CommitRow extends AppendRow {
  created_at: Date | null;
  parent_id: string | null;
  branched_at_turn: number | null;
  children: string[] | null;
}

/** The parameters of `sk_commit`, in the function's order (null = leave the column as is). */
export const COMMIT_PARAMS: readonly FunctionParam<CommitArgs>[] = [
  { name: 'p_id', type: 'text', value: (a) => a.id },
  // Expectations: the UPDATE runs only when they hold (null: no expectation).
  { name: 'p_expected_rev', type: 'bigint', value: (a) => a.expectedRevision ?? null },
  { name: 'p_expected_count', type: 'integer', value: (a) => a.expectedMessageCount ?? null },
  // true: the bodies replace the history; false: they are appended.
  { name: 'p_replace', type: 'boolean', value: (a) => a.replace },
  { name: 'p_bodies', type: 'text[]', value: (a) => a.bodies },
  // Search rows of the new messages: row i holds the messages at offsets seq[i] … next[i] - 1.
  { name: 'p_search_seq', type: 'integer[]', value: (a) => a.search.seqs },
  { name: 'p_search_next', type: 'integer[]', value: (a) => a.search.nexts },
  { name: 'p_search', type: 'text[]', value: (a) => a.search.texts },
  { name: 'p_now', type: 'timestamp with time zone', value: (a) => a.now },
  // Patched header fields; the title also in lower case, for its search row ('': no row).
  { name: 'p_title', type: 'text', value: (a) => a.title ?? null },
  {
    name: 'p_title_lc',
    type: 'text',
    value: (a) =>
      a.title === undefined ? null : a.indexTitle === false ? '' : a.title.toLowerCase(),
  },
  { name: 'p_folder', type: 'text', value: (a) => a.folder ?? null },
  { name: 'p_status', type: 'text', value: (a) => a.status ?? null },
  { name: 'p_model', type: 'text', value: (a) => a.model ?? null },
  { name: 'p_provider', type: 'text', value: (a) => a.provider ?? null },
  // Patched counters (set before the increments apply).
  { name: 'p_token_count', type: 'bigint', value: (a) => a.tokenCount ?? null },
  { name: 'p_cost', type: 'double precision', value: (a) => a.costUsd ?? null },
  { name: 'p_turn_count', type: 'bigint', value: (a) => a.turnCount ?? null },
  // Metadata: replace it by p_meta_set, or merge p_meta_set in and delete the p_meta_del keys.
  { name: 'p_meta_replace', type: 'boolean', value: (a) => a.metaReplace },
  { name: 'p_meta_set', type: 'jsonb', value: (a) => a.metaSet ?? null },
  { name: 'p_meta_del', type: 'text[]', value: (a) => a.metaDel ?? null },
  // Nullable fields: the *_set flag says whether the value (possibly null) is written.
  { name: 'p_state_set', type: 'boolean', value: (a) => a.stateSet },
  { name: 'p_state', type: 'text', value: (a) => a.state ?? null },
  { name: 'p_archived_set', type: 'boolean', value: (a) => a.archivedSet },
  { name: 'p_archived', type: 'timestamp with time zone', value: (a) => a.archived ?? null },
  { name: 'p_mode_set', type: 'boolean', value: (a) => a.modeSet },
  { name: 'p_mode', type: 'text', value: (a) => a.mode ?? null },
  // Counter increments (refused with code out_of_range when a result leaves its range).
  { name: 'p_inc_tokens', type: 'bigint', value: (a) => a.incTokens ?? null },
  { name: 'p_inc_cost', type: 'double precision', value: (a) => a.incCost ?? null },
  { name: 'p_inc_turns', type: 'bigint', value: (a) => a.incTurns ?? null },
  // Return created_at, parent_id, branched_at_turn and children too (save needs them).
  { name: 'p_want_header', type: 'boolean', value: (a) => a.wantHeader },
  // Adds one to history_rewrites (core's lineage rules decided it).
  { name: 'p_rewrite', type: 'boolean', value: (a) => a.rewrite },
];

/** The parameters of the `append` statement, in `$n` order. */
export const APPEND_PARAMS: readonly FunctionParam<AppendArgs>[] = [
  { name: 'p_id', type: 'text', value: (a) => a.id },
  { name: 'p_expected_rev', type: 'bigint', value: (a) => a.expectedRevision ?? null },
  { name: 'p_expected_count', type: 'integer', value: (a) => a.expectedMessageCount ?? null },
  { name: 'p_bodies', type: 'text[]', value: (a) => a.bodies },
  { name: 'p_search_seq', type: 'integer[]', value: (a) => a.search.seqs },
  { name: 'p_search_next', type: 'integer[]', value: (a) => a.search.nexts },
  { name: 'p_search', type: 'text[]', value: (a) => a.search.texts },
  { name: 'p_now', type: 'timestamp with time zone', value: (a) => a.now },
  { name: 'p_inc_tokens', type: 'bigint', value: (a) => a.incTokens ?? null },
  { name: 'p_inc_cost', type: 'double precision', value: (a) => a.incCost ?? null },
  { name: 'p_inc_turns', type: 'bigint', value: (a) => a.incTurns ?? null },
];

/** `name` of `params` as `$n::type` (throws for an unknown name: a typo fails at build time). */
function paramRef<A>(params: readonly FunctionParam<A>[], name: string): string {
  const i = params.findIndex((p) => p.name === name);
  if (i < 0) throw new Error(`no parameter ${name}`);
  return `$${i + 1}::${params[i]!.type}`;
}

/**
 * The patch-free turn of schema `s` as one statement: the UPDATE of the session row
 * guarded by the expectations and by the counters' ranges (the checks of sk_commit), then
 * INSERTs of the message rows and of the pending search rows, tagged with the session's
 * search epoch. No row when the UPDATE matched nothing (the caller reads why with
 * `appendRefusal`). Room for more parts of the same write (an operation id) as further CTEs.
 */
export function appendStatementSql(s: string): string {
  const p = (name: string) => paramRef(APPEND_PARAMS, name);
  const n = `cardinality(${p('p_bodies')})`;
  return `WITH s AS (
  UPDATE ${s}.sessions AS s SET
    token_count = s.token_count + coalesce(${p('p_inc_tokens')}, 0),
    cost_usd = CASE WHEN coalesce(${p('p_inc_cost')}, 0) = 0 THEN s.cost_usd
      ELSE s.cost_usd + ${p('p_inc_cost')} END,
    turn_count = s.turn_count + coalesce(${p('p_inc_turns')}, 0),
    message_count = s.message_count + ${n},
    revision = s.revision + 1,
    updated_at = greatest(${p('p_now')}, s.updated_at + interval '1 millisecond')
  WHERE s.id = ${p('p_id')}
    AND (${p('p_expected_rev')} IS NULL OR s.revision = ${p('p_expected_rev')})
    AND (${p('p_expected_count')} IS NULL OR s.message_count = ${p('p_expected_count')})
    AND (${p('p_inc_tokens')} IS NULL OR ${s}.sk_count_ok(s.token_count + ${p('p_inc_tokens')}))
    AND (${p('p_inc_turns')} IS NULL OR ${s}.sk_count_ok(s.turn_count + ${p('p_inc_turns')}))
    AND ${s}.sk_cost_ok(s.cost_usd, ${p('p_inc_cost')})
  RETURNING s.revision, s.message_count, s.updated_at, s.search_epoch
), m AS (
  INSERT INTO ${s}.messages (session_id, seq, body)
  SELECT ${p('p_id')}, s.message_count - ${n} + u.o::integer - 1, u.b
  FROM s, unnest(${p('p_bodies')}) WITH ORDINALITY AS u(b, o)
), p AS (
  INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
  SELECT ${p('p_id')}, s.message_count - ${n} + u.o, s.message_count - ${n} + u.e, s.search_epoch, u.t
  FROM s, unnest(${p('p_search_seq')}, ${p('p_search_next')}, ${p('p_search')}) AS u(o, e, t)
)
SELECT 'ok' AS code, s.revision, s.message_count, s.updated_at,
  NULL::bigint AS token_count, NULL::double precision AS cost_usd, NULL::bigint AS turn_count
FROM s`;
}

/** A call of `s.fn` in named notation, one `$n` per parameter of `params`, in order. */
export function namedCall<A>(s: string, fn: string, params: readonly FunctionParam<A>[]): string {
  const args = params.map((p, i) => `${p.name} => $${i + 1}::${p.type}`).join(', ');
  return `SELECT * FROM ${s}.${fn}(${args})`;
}

/** The values of a `namedCall`, in the order of `params`. */
export function callValues<A>(params: readonly FunctionParam<A>[], args: A): unknown[] {
  return params.map((p) => p.value(args));
}

/** What an `append` that wrote nothing finds: the session's revision, count and counters. */
export interface RefusalRow extends StoredCounters {
  revision: string;
  message_count: number;
}

/** The turn-write statements of schema `s`; `names` are the prepared-statement names. */
export function commitStatements(
  s: string,
  names: { commit: string; append: string },
): { commit: Sql<CommitRow>; append: Sql<AppendRow>; appendRefusal: Sql<RefusalRow> } {
  return {
    commit: sql<CommitRow>(namedCall(s, 'sk_commit', COMMIT_PARAMS), names.commit),
    append: sql<AppendRow>(appendStatementSql(s), names.append),
    /** $1 id: what the `append` that wrote nothing met (no row: the session does not exist). */
    appendRefusal: sql<RefusalRow>(
      `SELECT revision, message_count, token_count, cost_usd, turn_count FROM ${s}.sessions WHERE id = $1`,
    ),
  };
}
