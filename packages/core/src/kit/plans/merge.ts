// The plan of `merge`: core's merge rule over two stored states.
import type { ErrorFactory } from '../../errors.js';
import { parentToMergeInto, planMerge } from '../../history-lineage.js';
import type { SessionState } from '../session-state.js';

/**
 * The id `child` merges into: its parent's. Throws `invalid_argument` for a root (read the
 * parent only after this).
 */
export function mergeTarget(errors: ErrorFactory, child: SessionState): string {
  return parentToMergeInto(errors, child.header);
}

/**
 * The parent's state after merging `child` into it (`planMerge`'s rule: `merge_diverged`
 * when the parent's history changed after the branch point; its own fields, counters plus
 * the branch's gains, `revision + 1`); its history becomes the child's `messageCount`
 * messages. Both states must be read in one atomic step with the write. Pure.
 */
export function planMergeInto(
  errors: ErrorFactory,
  parent: SessionState,
  child: SessionState,
  now: Date = new Date(),
): SessionState {
  const plan = planMerge(
    errors,
    { header: parent.header, lineage: parent.lineage, messageCount: parent.messageCount },
    { header: child.header, lineage: child.lineage },
    now,
  );
  return { header: plan.header, lineage: plan.lineage, messageCount: child.messageCount };
}
