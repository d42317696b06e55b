// The call of `sk_commit`, the server-side function of commits with a patch or a replace
// and of save (its SQL: migrations/008-operations-truncate.ts; the patch-free turn is a plain
// statement, append.ts). The call is built from one ordered table of the function's
// parameters — name, SQL type, the value the store passes, what it means — in named
// notation (`p_id => $1::text`), so the call, its values and the function cannot drift
// apart silently: test/commit-statements.test.ts compares the table with `pg_proc`.
import type { CommitInput } from '@sessionkit/core';
import type { HeaderRow } from '../codec.js';
import type { StoredCounters } from '../counters.js';
import type { LineageColumns } from '../lineage.js';
import type { SearchChunks } from '../search-rows.js';
import { headerColumns, sql } from '../sql.js';

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
  /** Truncate: keep the first `keep` messages, drop the rest, append at `keep`. */
  keep?: number | undefined;
  /** The operation id to record with the result, in the same statement. */
  operationId?: string | undefined;
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
  | 'out_of_range'
  | 'replayed';

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
  // Truncate to this many messages before appending (null: no truncate; schema version 8).
  { name: 'p_keep', type: 'integer', value: (a) => a.keep ?? null },
  // The operation id recorded with the result (null: none; schema version 8).
  { name: 'p_op_id', type: 'text', value: (a) => a.operationId ?? null },
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

/** The stored state a planned commit reads under the row lock: header, lineage, epoch. */
export type CommitLockRow = HeaderRow & LineageColumns & { search_epoch: string };

/** The result recorded for an operation id. */
export interface OperationRow {
  revision: string;
  message_count: number;
  updated_at: Date;
}

/**
 * The statements of a commit in schema `s`: the sk_commit call (`name` is its
 * prepared-statement name) and the reads of a planned commit (commit.ts).
 */
export function commitStatements(s: string, name: string) {
  return {
    commit: sql<CommitRow>(namedCall(s, 'sk_commit', COMMIT_PARAMS), name),

    /** $1 id: the session's header, lineage and search epoch, row-locked for the transaction. */
    lockForCommit: sql<CommitLockRow>(
      `SELECT ${headerColumns('x', s)}, x.history_rewrites, x.merge_base,
  x.search_epoch::text AS search_epoch
FROM ${s}.sessions AS x WHERE x.id = $1 FOR UPDATE`,
    ),

    /** $1 id, $2 operation id: the result recorded for it (no row: none). */
    operation: sql<OperationRow>(
      `SELECT revision, message_count, updated_at FROM ${s}.operations
WHERE session_id = $1 AND operation_id = $2`,
    ),

    /**
     * $1 id, $2 epoch, $3 keep: locks the pending message rows of the epoch that hold a
     * message from $3 on, waiting for an indexer moving them (its move is one transaction).
     */
    lockPendingPast: sql(
      `SELECT 1 FROM ${s}.search_pending
WHERE session_id = $1 AND epoch = $2::bigint AND seq >= 0 AND next_seq > $3 FOR UPDATE`,
    ),

    /**
     * $1 id, $2 epoch, $3 keep: the first message of the search rows of the epoch that hold
     * messages on both sides of $3 (null: none), whose kept part a truncate rewrites.
     */
    cutStart: sql<{ start: number | null }>(
      `SELECT least(
  (SELECT min(k.first_seq) FROM ${s}.search_chunks AS k
    WHERE k.session_id = $1 AND k.epoch = $2::bigint AND k.first_seq < $3 AND k.end_seq > $3),
  (SELECT min(p.seq) FROM ${s}.search_pending AS p
    WHERE p.session_id = $1 AND p.epoch = $2::bigint AND p.seq >= 0 AND p.seq < $3
      AND p.next_seq > $3)) AS start`,
    ),

    /** $1 id, $2 first seq, $3 end seq: the bodies of messages $2 … $3 - 1 in seq order. */
    bodiesBetween: sql<{ seq: number; body: string }>(
      `SELECT seq, body FROM ${s}.messages WHERE session_id = $1 AND seq >= $2 AND seq < $3
ORDER BY seq`,
    ),
  };
}
