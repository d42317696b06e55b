// Statements of the search tables (schema version 6, see migrations/006-search-blocks.ts):
// what the indexer takes from `search_pending`, the deletes every writer of a session
// shares, and repair's sweep of rows no session owns. `s`: the quoted schema.
import { sql } from '../sql.js';

/** A pending row the indexer took, in session, epoch, seq order; `owned`: still its session's. */
export interface TakenRow {
  session_id: string;
  epoch: string;
  seq: number;
  next_seq: number;
  text: string;
  owned: boolean;
}

/**
 * `DELETE` of the rows of `table` that `cond` (over alias `q`) selects and this
 * transaction can lock: a delete of search rows that never waits on the indexer, which
 * holds the pending rows it is moving (the rows it writes from them carry an epoch or a
 * session that search no longer counts, see `ownedBy`).
 */
function deleteSkippingLocked(s: string, table: string, cond: string): string {
  return `DELETE FROM ${s}.${table} AS r WHERE r.ctid = ANY (ARRAY(
    SELECT q.ctid FROM ${s}.${table} AS q WHERE ${cond} FOR UPDATE SKIP LOCKED))`;
}

/**
 * CTE parts (`k AS (…), w AS (…), p AS (…)`, no trailing comma) deleting the search rows of
 * the sessions `cond` selects (a condition on `q.session_id`, e.g. `q.session_id = $1`):
 * all of them, or with `which = 'messages'` those of the messages only (the title's kept).
 */
export function searchRowDeletes(s: string, cond: string, which: 'all' | 'messages' = 'all') {
  const words = which === 'messages' ? `${cond} AND q.block >= 0` : cond;
  const pending = which === 'messages' ? `${cond} AND q.seq >= 0` : cond;
  return `k AS (${deleteSkippingLocked(s, 'search_chunks', cond)}),
w AS (${deleteSkippingLocked(s, 'search_words', words)}),
p AS (${deleteSkippingLocked(s, 'search_pending', pending)})`;
}

/**
 * Whether search row `r` still belongs to its session: the session exists and, for a
 * message row, is still in the row's search epoch. A title row (`titleColumn` < 0) lives as
 * long as its session: a title patch deletes and replaces it.
 */
function ownedBy(s: string, r: string, titleColumn?: 'seq' | 'block'): string {
  const epoch = `x.search_epoch = ${r}.epoch`;
  const cond = titleColumn ? `(${r}.${titleColumn} < 0 OR ${epoch})` : epoch;
  return `EXISTS (SELECT 1 FROM ${s}.sessions AS x WHERE x.id = ${r}.session_id AND ${cond})`;
}

/**
 * The search statements of schema `s`; `tag` names the prepared ones (unique per schema).
 */
export function searchStatements(s: string, tag: string) {
  const sweep = (table: string, titleColumn?: 'seq' | 'block') =>
    deleteSkippingLocked(s, table, `NOT ${ownedBy(s, 'q', titleColumn)}`);
  return {
    /**
     * $1 limit: deletes up to $1 pending rows no other transaction holds (in session and
     * seq order, `SKIP LOCKED`: two indexers never wait on each other or on a writer) and
     * returns them, `owned` telling those still their session's (the others are just gone).
     * Prepared: planning it cost more server time than running it on a pass of a few dozen
     * rows, and a pass runs every ~0.5 s while turns come.
     */
    takePending: sql<TakenRow>(
      `WITH t AS (
  DELETE FROM ${s}.search_pending AS p WHERE p.ctid = ANY (ARRAY(
    SELECT q.ctid FROM ${s}.search_pending AS q ORDER BY q.session_id, q.seq
    LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING p.session_id, p.epoch, p.seq, p.next_seq, p.text
)
SELECT t.session_id, t.epoch::text AS epoch, t.seq, t.next_seq, t.text,
  ${ownedBy(s, 't', 'seq')} AS owned
FROM t ORDER BY t.session_id, t.epoch, t.seq`,
      `sk_take_pending_${tag}`,
    ),

    /**
     * $1 words pattern, $2 cap: how many words rows match, counted up to the cap (the
     * listing's choice between its search plans; the trigram index serves it).
     */
    wordsMatchCount: sql<{ n: number }>(`SELECT count(*)::integer AS n FROM (
  SELECT 1 FROM ${s}.search_words AS w WHERE w.words LIKE $1 LIMIT $2) AS c`),

    /** The schema's recorded search scope (settings; no row: `messages`). */
    recordedScope: sql<{ value: string }>(`SELECT value FROM ${s}.settings WHERE name = 'search'`),

    /** Whether any pending row is left. */
    anyPending: sql<{ p: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${s}.search_pending) AS p`),

    /**
     * Deletes the search rows of sessions that no longer exist and the message rows of
     * past search epochs (what a write racing the indexer leaves), skipping rows another
     * transaction holds, and the operation ids of sessions that no longer exist (since
     * version 10 no foreign key deletes them: a session deleted by hand leaves them).
     */
    sweepOrphans: sql(`WITH k AS (${sweep('search_chunks')}),
w AS (${sweep('search_words', 'block')}),
p AS (${sweep('search_pending', 'seq')}),
o AS (DELETE FROM ${s}.operations AS r WHERE r.ctid = ANY (ARRAY(
  SELECT q.ctid FROM ${s}.operations AS q
  WHERE NOT EXISTS (SELECT 1 FROM ${s}.sessions AS x WHERE x.id = q.session_id)
  FOR UPDATE SKIP LOCKED)))
SELECT 1`),
  };
}

/** The statements `searchStatements` builds. */
export type SearchStatements = ReturnType<typeof searchStatements>;
