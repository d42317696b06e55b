// The plan of `enforceMax`: which roots go.
import { compareListOrder } from '../../session.js';

/** A root session as pruning ranks it. */
export interface PruneCandidate {
  id: string;
  updatedAt: Date | number;
}

/**
 * The roots `enforceMax(max)` deletes: all but the newest `max` of `roots`, ranked as
 * `list` ranks them (`updatedAt` desc, then `id` desc), returned newest first. Sub-sessions
 * must not be among `roots`. `max <= 0` means unlimited (none). Pure.
 */
export function pruneVictims<C extends PruneCandidate>(roots: Iterable<C>, max: number): C[] {
  // Stryker disable next-line all: out of the suite's reach — BaseStore never calls pruneRoots with max ≤ 0; the guard keeps a direct caller from deleting every root.
  if (max <= 0) return [];
  const ranked = [...roots].sort((a, b) => compareListOrder(a, b, false));
  return ranked.slice(max);
}
