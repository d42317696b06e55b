// Core's HistoryLineage as two columns of `sessions`: `history_rewrites` (bigint) and
// `merge_base` (jsonb, null without a base). The rules themselves are core's
// (createdLineage, branchedLineage, committedLineage, savedLineage, planMerge,
// promotedChild); this file only maps them to and from rows.
import {
  type HistoryLineage,
  type PromotionHeader,
  promotedChild,
  readLineage,
} from '@sessionkit/core/adapter';

/** The lineage columns of a row (as node-postgres returns them). */
export interface LineageColumns {
  history_rewrites: string | number | null;
  merge_base: unknown;
}

/** The lineage of a stored row, through core's `readLineage` (older rows: `{rewrites: 0}`). */
export function lineageOf(row: LineageColumns): HistoryLineage {
  const rewrites = row.history_rewrites === null ? 0 : Number(row.history_rewrites);
  const base = row.merge_base ?? undefined;
  return readLineage(base === undefined ? { rewrites } : { rewrites, base });
}

/** The column values of `lineage`: `[history_rewrites, merge_base JSON text or null]`. */
export function lineageParams(lineage: HistoryLineage): [number, string | null] {
  return [lineage.rewrites, lineage.base === undefined ? null : JSON.stringify(lineage.base)];
}

/** The row of a session taking part in a delete's promotion step. */
export interface PromotionRow extends LineageColumns {
  id: string;
  parent_id: string | null;
  branched_at_turn: number | null;
}

/** The new parent, branch point and lineage of one promoted child. */
export interface Promotion {
  id: string;
  parentId: string | null;
  branchedAtTurn: number | null;
  rewrites: number;
  base: string | null;
}

/** The header fields core's `promotedChild` reads (it keeps the others as they are). */
function promotionHeaderOf(row: PromotionRow): PromotionHeader {
  const header: PromotionHeader = { id: row.id };
  if (row.parent_id !== null) header.parentId = row.parent_id;
  if (row.branched_at_turn !== null) header.branchedAtTurn = row.branched_at_turn;
  return header;
}

/**
 * What each child of the deleted session becomes: core's `promotedChild` of the child and
 * the deleted session (grandparent as the new parent, `branchedAtTurn` re-based, merge
 * base taken from the deleted session; or a root without base). Pure.
 */
export function promotionsOf(
  deleted: PromotionRow,
  children: readonly PromotionRow[],
): Promotion[] {
  const d = { header: promotionHeaderOf(deleted), lineage: lineageOf(deleted) };
  return children.map((row) => {
    const p = promotedChild({ header: promotionHeaderOf(row), lineage: lineageOf(row) }, d);
    const [rewrites, base] = lineageParams(p.lineage);
    return {
      id: row.id,
      parentId: p.header.parentId ?? null,
      branchedAtTurn: p.header.branchedAtTurn ?? null,
      rewrites,
      base,
    };
  });
}
