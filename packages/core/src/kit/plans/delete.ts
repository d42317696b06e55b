// The plan of `delete`: what happens to the deleted session's children.
import { promotedChild } from '../../history-lineage.js';
import type { SessionState } from '../session-state.js';

/**
 * The states of `children` after their parent `deleted` is removed: each promoted by
 * `promotedChild` (re-parented to the grandparent with a re-based `branchedAtTurn` and
 * merge base, or made a root). Revision and `updatedAt` do not change. Pure.
 */
export function planPromotions(
  deleted: Pick<SessionState, 'header' | 'lineage'>,
  children: readonly SessionState[],
): SessionState[] {
  return children.map((child) => {
    const promoted = promotedChild(
      { header: child.header, lineage: child.lineage },
      { header: deleted.header, lineage: deleted.lineage },
    );
    return { header: promoted.header, lineage: promoted.lineage, messageCount: child.messageCount };
  });
}
