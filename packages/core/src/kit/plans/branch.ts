// The plans of `branch` and `clone`: the new session's state from its source's.
import { branchHeader, cloneHeader } from '../../adapter-rules.js';
import type { ErrorFactory } from '../../errors.js';
import { branchedLineage, rootLineage } from '../../history-lineage.js';
import { assertBranchPoint } from '../../validate.js';
import type { SessionState } from '../session-state.js';

/**
 * The state of a new branch `childId` of `parent` at `atTurn` messages (it takes the
 * parent's first `atTurn` messages): `branchHeader`'s header, `branchedLineage`'s lineage.
 * Throws `invalid_argument` when `atTurn` is outside `0..parent.messageCount` — check it
 * with the parent read in the same atomic step as the write. Pure.
 */
export function planBranch(
  errors: ErrorFactory,
  parent: SessionState,
  childId: string,
  atTurn: number,
  now: Date = new Date(),
): SessionState {
  assertBranchPoint(errors, parent.header.id, atTurn, parent.messageCount);
  return {
    header: branchHeader(parent.header, childId, atTurn, now),
    lineage: branchedLineage(parent.header, parent.lineage),
    messageCount: atTurn,
  };
}

/**
 * The state of `newId`, an independent copy of `source` with its whole history:
 * `cloneHeader`'s header (no parent, not archived, `metadata.clonedFrom`), a root's
 * lineage. Pure.
 */
export function planClone(
  source: SessionState,
  newId: string,
  now: Date = new Date(),
): SessionState {
  return {
    header: cloneHeader(source.header, newId, now),
    lineage: rootLineage(),
    messageCount: source.messageCount,
  };
}
