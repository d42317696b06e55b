// Reading a stored lineage back: records written before lineage existed, or damaged ones,
// read as a lineage the rules can use. The rules themselves live in history-lineage.ts.
import { type HistoryLineage, type MergeBase, rootLineage } from './history-lineage.js';

/**
 * A stored lineage, checked; `undefined`, `null` or a malformed value (sessions stored
 * before lineage existed) reads as `{rewrites: 0}` with no base: such a child merges when
 * its parent has not rewritten since lineage was recorded, and gives the parent its own
 * counters.
 */
export function readLineage(value: unknown): HistoryLineage {
  if (typeof value !== 'object' || value === null) return rootLineage();
  const v = value as { rewrites?: unknown; base?: unknown };
  const rewrites = Number.isSafeInteger(v.rewrites) ? (v.rewrites as number) : 0;
  const b = v.base as Partial<MergeBase> | undefined | null;
  if (typeof b !== 'object' || b === null) return { rewrites };
  const base: MergeBase = {
    parentRewrites: Number.isSafeInteger(b.parentRewrites) ? (b.parentRewrites as number) : 0,
    ownRewrites: Number.isSafeInteger(b.ownRewrites) ? (b.ownRewrites as number) : -1,
  };
  const c = b.counters;
  if (
    typeof c === 'object' &&
    c !== null &&
    typeof c.tokenCount === 'number' &&
    typeof c.costUsd === 'number' &&
    typeof c.turnCount === 'number'
  ) {
    base.counters = { tokenCount: c.tokenCount, costUsd: c.costUsd, turnCount: c.turnCount };
  }
  return { rewrites, base };
}
