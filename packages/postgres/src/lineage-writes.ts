// The transaction bodies of the writes that read or move lineage: delete (with core's
// promotion), merge (core's planMerge), and the reads create and save need. Each runs on
// the caller's client inside the caller's transaction.
import type { SessionSummary } from '@sessionkit/core';
import { type HistoryLineage, planMerge, type SessionHeader } from '@sessionkit/core/adapter';
import type { PoolClient } from 'pg';
import { errors } from './errors.js';
import { lineageOf, lineageParams, type PromotionRow, promotionsOf } from './lineage.js';
import { type HeaderRow, summaryOf } from './rows.js';
import { headerColumns } from './sql.js';

/** How often merge re-reads a child whose parent changed while it waited for the locks. */
const MAX_REPARENT_RETRIES = 5;

/** The header of a summary (what core's lineage rules take). */
export function headerOf(summary: SessionSummary): SessionHeader {
  const { messageCount: _n, children: _c, ...header } = summary;
  return header;
}

/**
 * The lineage of `parentId` when that session exists (share-locked against deletion until
 * the transaction ends), else `undefined`: what core's `createdLineage` takes.
 */
export async function parentLineage(
  c: PoolClient,
  s: string,
  parentId: string,
): Promise<HistoryLineage | undefined> {
  const r = await c.query<PromotionRow>(
    `SELECT id, parent_id, branched_at_turn, history_rewrites, merge_base
     FROM ${s}.sessions WHERE id = $1 FOR KEY SHARE`,
    [parentId],
  );
  const row = r.rows[0];
  return row ? lineageOf(row) : undefined;
}

/**
 * Deletes `id` with its messages, search rows and follow pins (status, events and
 * bindings cascade) after promoting its children by core's `promotedChild`: the session
 * and its parent are locked by `sk_delete_lock`, the children FOR UPDATE, then one
 * statement writes the promotions and deletes. A session whose parent does not exist is
 * deleted like any other. Returns false when `id` does not exist.
 */
export async function deleteWithPromotions(c: PoolClient, s: string, id: string): Promise<boolean> {
  const locked = await c.query<PromotionRow & { is_found: boolean }>(
    `SELECT is_found, parent_id, branched_at_turn, history_rewrites, merge_base
     FROM ${s}.sk_delete_lock($1)`,
    [id],
  );
  const d = locked.rows[0];
  if (!d?.is_found) return false;
  const kids = await c.query<PromotionRow>(
    `SELECT id, parent_id, branched_at_turn, history_rewrites, merge_base FROM ${s}.sessions
     WHERE parent_id = $1 AND id <> $1 ORDER BY id FOR UPDATE`,
    [id],
  );
  const promotions = promotionsOf({ ...d, id }, kids.rows);
  await c.query(
    `WITH up AS (
  UPDATE ${s}.sessions AS c SET parent_id = u.p, branched_at_turn = u.b,
    history_rewrites = u.r, merge_base = u.m::jsonb
  FROM unnest($2::text[], $3::text[], $4::integer[], $5::bigint[], $6::text[]) AS u(id, p, b, r, m)
  WHERE c.id = u.id
), f AS (
  DELETE FROM ${s}.follows WHERE target = $1
), m AS (
  DELETE FROM ${s}.messages WHERE session_id = $1
), x AS (
  DELETE FROM ${s}.search_rows WHERE session_id = $1
)
DELETE FROM ${s}.sessions WHERE id = $1`,
    [
      id,
      promotions.map((p) => p.id),
      promotions.map((p) => p.parentId),
      promotions.map((p) => p.branchedAtTurn),
      promotions.map((p) => p.rewrites),
      promotions.map((p) => p.base),
    ],
  );
  return true;
}

type LineageRow = HeaderRow & { history_rewrites: string; merge_base: unknown };

/**
 * Merges `childId` into its parent: locks the parent (FOR UPDATE, so merges into one
 * parent run one after the other) and then the child (FOR SHARE) — the parent → child
 * order delete takes — re-reading the child's parent under the locks; core's `planMerge`
 * decides (throws `invalid_argument` / `merge_diverged`, nothing written); then the
 * parent gets the plan's header and lineage and the child's message and search rows.
 * Returns the parent's new summary and the JSON texts of its messages. Throws
 * `not_found`, `invalid_argument`, `merge_diverged`, `unavailable`.
 */
export async function mergeIntoParent(
  c: PoolClient,
  s: string,
  childId: string,
  onBodyRead: () => void,
): Promise<{ parent: SessionSummary; bodies: string[] }> {
  const cols = `${headerColumns('x', s)}, x.history_rewrites, x.merge_base`;
  let parentRow: LineageRow | undefined;
  let childRow: LineageRow | undefined;
  let parentId = '';
  for (let attempt = 0; ; attempt++) {
    const peek = await c.query<{ parent_id: string | null }>(
      `SELECT parent_id FROM ${s}.sessions WHERE id = $1`,
      [childId],
    );
    if (!peek.rows[0]) throw errors.notFound(childId);
    const pid = peek.rows[0].parent_id;
    if (pid === null) {
      throw errors.invalid(`merge: session "${childId}" has no parent to merge into`, childId);
    }
    parentId = pid;
    const p = await c.query<LineageRow>(
      `SELECT ${cols} FROM ${s}.sessions AS x WHERE x.id = $1 FOR UPDATE`,
      [parentId],
    );
    parentRow = p.rows[0];
    const ch = await c.query<LineageRow>(
      `SELECT ${cols} FROM ${s}.sessions AS x WHERE x.id = $1 FOR SHARE`,
      [childId],
    );
    childRow = ch.rows[0];
    if (!childRow) throw errors.notFound(childId);
    if (childRow.parent_id === parentId && parentRow) break;
    if (childRow.parent_id === parentId) throw errors.notFound(parentId);
    if (attempt >= MAX_REPARENT_RETRIES) {
      throw errors.unavailable(`merge: the parent of "${childId}" keeps changing`);
    }
  }
  const parent = parentRow!;
  const child = childRow;
  const plan = planMerge(
    errors,
    {
      header: headerOf(summaryOf(parent)),
      lineage: lineageOf(parent),
      messageCount: parent.message_count,
    },
    { header: headerOf(summaryOf(child)), lineage: lineageOf(child) },
  );
  // Separate statements: sub-statements of one WITH run on one snapshot, so an INSERT
  // there would collide with the rows its sibling DELETE removes.
  await c.query(
    `WITH dm AS (DELETE FROM ${s}.messages WHERE session_id = $1)
DELETE FROM ${s}.search_rows WHERE session_id = $1 AND seq >= 0`,
    [parentId],
  );
  onBodyRead();
  const [rewrites, base] = lineageParams(plan.lineage);
  const h = plan.header;
  const r = await c.query<HeaderRow & { bodies: string[] }>(
    `WITH src AS (
  SELECT seq, body FROM ${s}.messages WHERE session_id = $2
), im AS (
  INSERT INTO ${s}.messages (session_id, seq, body) SELECT $1, seq, body FROM src
), isr AS (
  INSERT INTO ${s}.search_rows (session_id, seq, text)
  SELECT $1, seq, text FROM ${s}.search_rows WHERE session_id = $2 AND seq >= 0
), up AS (
  UPDATE ${s}.sessions SET token_count = $3, cost_usd = $4, turn_count = $5,
    message_count = $6, revision = $7, updated_at = $8,
    history_rewrites = $9, merge_base = $10::jsonb
  WHERE id = $1
  RETURNING *
)
SELECT ${headerColumns('up', s)},
  ARRAY(SELECT src.body FROM src ORDER BY src.seq) AS bodies
FROM up`,
    [
      parentId,
      childId,
      h.tokenCount,
      h.costUsd,
      h.turnCount,
      child.message_count,
      h.revision,
      h.updatedAt,
      rewrites,
      base,
    ],
  );
  const row = r.rows[0];
  if (!row) throw errors.notFound(parentId);
  return { parent: summaryOf(row), bodies: row.bodies };
}
