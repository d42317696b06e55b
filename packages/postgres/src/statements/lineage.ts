// Statements of the writes that read or move lineage: create's parent read, delete with
// promotion, merge. Each sits next to the type of the rows it returns. `s`: quoted schema.
import type { PromotionRow } from '../lineage.js';
import { headerColumns, sql } from '../sql.js';
import { searchRowDeletes } from './search.js';
import type { CopySourceRow } from './sessions.js';

/** What `sk_delete_lock` returns: whether the session exists, and its promotion columns. */
export type DeleteLockRow = Omit<PromotionRow, 'id'> & { is_found: boolean };

/** A session's parent (merge's first, unlocked look). */
export interface ParentRow {
  parent_id: string | null;
}

/** A side of a merge: header and lineage. */
export type MergeSideRow = CopySourceRow;

/** The merged parent: its children and the JSON texts of its new messages. */
export interface MergedRow {
  children: string[];
  bodies: string[];
}

/** The lineage statements of schema `s`. */
export function lineageStatements(s: string) {
  return { ...deleteStatements(s), ...mergeStatements(s) };
}

/** The statements of create's parent read and of delete with promotion. */
function deleteStatements(s: string) {
  return {
    /** $1 id: its promotion columns, share-locked against deletion (create's parent). */
    lockParentLineage: sql<PromotionRow>(
      `SELECT id, parent_id, branched_at_turn, history_rewrites, merge_base
     FROM ${s}.sessions WHERE id = $1 FOR KEY SHARE`,
    ),

    /** $1 id: locks the parent and the session (see migration 004) and returns its lineage. */
    deleteLock: sql<DeleteLockRow>(
      `SELECT is_found, parent_id, branched_at_turn, history_rewrites, merge_base
     FROM ${s}.sk_delete_lock($1)`,
    ),

    /** $1 id: its children (not itself), row-locked, in id order. */
    lockChildren: sql<PromotionRow>(
      `SELECT id, parent_id, branched_at_turn, history_rewrites, merge_base FROM ${s}.sessions
     WHERE parent_id = $1 AND id <> $1 ORDER BY id FOR UPDATE`,
    ),

    /**
     * Writes the promotions and deletes session $1 with its follow pins, message, operation
     * and search rows (status, events and bindings cascade; pending rows the indexer holds are left to
     * it, see searchRowDeletes). $2…$6: the promoted children's ids, new parents, branch
     * points, rewrites and merge bases (JSON text), one array each.
     */
    deleteWithPromotions: sql(`WITH up AS (
  UPDATE ${s}.sessions AS c SET parent_id = u.p, branched_at_turn = u.b,
    history_rewrites = u.r, merge_base = u.m::jsonb
  FROM unnest($2::text[], $3::text[], $4::integer[], $5::bigint[], $6::text[]) AS u(id, p, b, r, m)
  WHERE c.id = u.id
), f AS (
  DELETE FROM ${s}.follows WHERE target = $1
), m AS (
  DELETE FROM ${s}.messages WHERE session_id = $1
), o AS (
  DELETE FROM ${s}.operations WHERE session_id = $1
), ${searchRowDeletes(s, 'q.session_id = $1')}
DELETE FROM ${s}.sessions WHERE id = $1`),
  };
}

/** The statements of merge. */
function mergeStatements(s: string) {
  const sideColumns = `${headerColumns('x', s)}, x.history_rewrites, x.merge_base`;
  return {
    /** $1 id: its parent, without a lock. */
    parentOf: sql<ParentRow>(`SELECT parent_id FROM ${s}.sessions WHERE id = $1`),

    /** $1 id: header and lineage, row-locked (the merge's parent). */
    lockMergeParent: sql<MergeSideRow>(
      `SELECT ${sideColumns} FROM ${s}.sessions AS x WHERE x.id = $1 FOR UPDATE`,
    ),

    /** $1 id: header and lineage, share-locked (the merge's child). */
    lockMergeChild: sql<MergeSideRow>(
      `SELECT ${sideColumns} FROM ${s}.sessions AS x WHERE x.id = $1 FOR SHARE`,
    ),

    /**
     * $1 parent: deletes its message rows and the search rows of its messages (not its
     * title's). A statement of its own: sub-statements of one WITH run on one snapshot, so
     * an INSERT there would collide with the rows its sibling DELETE removes.
     */
    clearMergeParent: sql(`WITH dm AS (DELETE FROM ${s}.messages WHERE session_id = $1),
${searchRowDeletes(s, 'q.session_id = $1', 'messages')}
SELECT 1`),

    /**
     * Copies child $2's message rows and its current search rows (chunks, block words,
     * pending rows: one snapshot, so each text once, wherever the indexer had it) to parent
     * $1 under a new search epoch, and writes the plan's header fields: $3 tokenCount,
     * $4 costUsd, $5 turnCount, $6 message count, $7 revision, $8 updatedAt, $9/$10
     * lineage. Returns the parent's children and new bodies.
     */
    mergeIntoParent: sql<MergedRow>(`WITH src AS (
  SELECT seq, body FROM ${s}.messages WHERE session_id = $2
), im AS (
  INSERT INTO ${s}.messages (session_id, seq, body) SELECT $1, seq, body FROM src
), up AS (
  UPDATE ${s}.sessions SET token_count = $3, cost_usd = $4, turn_count = $5,
    message_count = $6, revision = $7, updated_at = $8,
    history_rewrites = $9, merge_base = $10::jsonb,
    search_epoch = nextval('${s}.search_epochs'::regclass)
  WHERE id = $1
  RETURNING id, search_epoch
), child AS (
  SELECT search_epoch FROM ${s}.sessions WHERE id = $2
), ic AS (
  INSERT INTO ${s}.search_chunks (session_id, epoch, first_seq, end_seq, text)
  SELECT up.id, up.search_epoch, k.first_seq, k.end_seq, k.text
  FROM up, child, ${s}.search_chunks AS k
  WHERE k.session_id = $2 AND k.epoch = child.search_epoch
), iw AS (
  INSERT INTO ${s}.search_words (session_id, epoch, block, words)
  SELECT up.id, up.search_epoch, w.block, w.words
  FROM up, child, ${s}.search_words AS w
  WHERE w.session_id = $2 AND w.epoch = child.search_epoch AND w.block >= 0
), ip AS (
  INSERT INTO ${s}.search_pending (session_id, seq, next_seq, epoch, text)
  SELECT up.id, p.seq, p.next_seq, up.search_epoch, p.text
  FROM up, child, ${s}.search_pending AS p
  WHERE p.session_id = $2 AND p.epoch = child.search_epoch AND p.seq >= 0
)
SELECT ARRAY(SELECT c.id::text FROM ${s}.sessions AS c WHERE c.parent_id = up.id ORDER BY c.id)
    AS children,
  ARRAY(SELECT src.body FROM src ORDER BY src.seq) AS bodies
FROM up`),
  };
}

/** The statements `lineageStatements` builds. */
export type LineageStatements = ReturnType<typeof lineageStatements>;
