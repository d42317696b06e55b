// The call of `sk_commit`, the server-side function of commits with a patch or a replace
// and of save (its SQL: migrations/006-search-blocks.ts; the patch-free turn is a plain
// statement, append.ts). The call is built from one ordered table of the function's
// parameters — name, SQL type, the value the store passes, what it means — in named
// notation (`p_id => $1::text`), so the call, its values and the function cannot drift
// apart silently: test/commit-statements.test.ts compares the table with `pg_proc`.
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

/**
 * One IN parameter of a server-side function: its name and SQL type exactly as
 * `pg_proc` / `format_type` spell them, and the value the store passes for it.
 */
export interface FunctionParam<A> {
  name: string;
  type: string;
  value(args: A): unknown;
}

/** The result codes of sk_commit and of the append statement (append.ts). */
export type CommitCode =
  | 'ok'
  | 'not_found'
  | 'conflict_revision'
  | 'conflict_count'
  | 'out_of_range';

/** The row of the append statement (sk_commit's first columns). */
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

/** A call of `s.fn` in named notation, one `$n` per parameter of `params`, in order. */
export function namedCall<A>(s: string, fn: string, params: readonly FunctionParam<A>[]): string {
  const args = params.map((p, i) => `${p.name} => $${i + 1}::${p.type}`).join(', ');
  return `SELECT * FROM ${s}.${fn}(${args})`;
}

/** The values of a `namedCall`, in the order of `params`. */
export function callValues<A>(params: readonly FunctionParam<A>[], args: A): unknown[] {
  return params.map((p) => p.value(args));
}

/** The sk_commit statement of schema `s`; `name` is its prepared-statement name. */
export function commitStatements(s: string, name: string): { commit: Sql<CommitRow> } {
  return { commit: sql<CommitRow>(namedCall(s, 'sk_commit', COMMIT_PARAMS), name) };
}
