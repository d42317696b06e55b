import { type CounterField, isCounterValue } from './counters.js';
// What a merge needs to know that the session data does not show: whether the parent's
// history changed after the branch point, whether the branch rewrote its own history,
// and what the branch's counters were when it started. Adapters keep a `HistoryLineage`
// beside each session's header and update it with these rules, so every backend decides
// a merge the same way without reading whole transcripts on a commit.

import type { SessionHeader } from './adapter-rules.js';
import type { ErrorFactory } from './errors.js';
import { nextWriteTime } from './session.js';
import type { CommitInput } from './types.js';

/** Where a session with a parent started from (see `HistoryLineage`). */
export interface MergeBase {
  /** The parent's `rewrites` when this session took its first messages from it. */
  parentRewrites: number;
  /**
   * This session's own `rewrites` at that moment; `-1` when unknown (a promoted session
   * whose deleted parent had rewritten its history). A merge from a session whose
   * `rewrites` differs from this replaces the parent's prefix, so it counts as a rewrite
   * of the parent.
   */
  ownRewrites: number;
  /**
   * The counters the session started with: a merge adds to the parent what the branch
   * gained since. Absent for sessions stored before lineage existed (a merge then gives
   * the parent the branch's counters, as earlier versions did).
   */
  counters?: { tokenCount: number; costUsd: number; turnCount: number } | undefined;
}

/**
 * Kept by an adapter beside each session's header; not part of `Session`. `rewrites`
 * counts the writes that changed the session's history other than by appending to it
 * (`commit` with `replace`, a `save` whose messages do not extend the stored ones, a
 * merge from a branch that rewrote its own history). `base` is set while the session has
 * a parent.
 */
export interface HistoryLineage {
  rewrites: number;
  base?: MergeBase | undefined;
}

/** The lineage of a session that has no parent and never rewrote its history. */
export function rootLineage(): HistoryLineage {
  return { rewrites: 0 };
}

function countersOf(h: Pick<SessionHeader, 'tokenCount' | 'costUsd' | 'turnCount'>) {
  return { tokenCount: h.tokenCount, costUsd: h.costUsd, turnCount: h.turnCount };
}

/**
 * The lineage of a session stored by `create`. With a `parentId` (an import restoring a
 * tree) its reference point is its creation: `parent` is the parent's lineage when the
 * parent exists (its current `rewrites` is the base), `undefined` otherwise (base 0, the
 * value a parent created later starts with), and the branch's gains are counted from the
 * counters it is created with.
 */
export function createdLineage(
  header: SessionHeader,
  parent: HistoryLineage | undefined,
): HistoryLineage {
  // Stryker disable next-line ConditionalExpression: equivalent — a root's base is never read: merge needs a parent, and a root's children are promoted to roots.
  if (header.parentId === undefined) return rootLineage();
  return {
    rewrites: 0,
    base: { parentRewrites: parent?.rewrites ?? 0, ownRewrites: 0, counters: countersOf(header) },
  };
}

/** The lineage of a new branch of `parent` (`branch`): based on the parent as it is now. */
export function branchedLineage(
  parentHeader: SessionHeader,
  parentLineage: HistoryLineage,
): HistoryLineage {
  return {
    rewrites: 0,
    base: {
      parentRewrites: parentLineage.rewrites,
      ownRewrites: 0,
      counters: countersOf(parentHeader),
    },
  };
}

/**
 * Whether a commit rewrites the history rather than only appending to it: a `replace`
 * (whatever it holds), or a `truncate` that drops at least one of the `messageCount`
 * stored messages.
 */
export function commitRewritesHistory(
  input: Pick<CommitInput<unknown>, 'replace' | 'truncate'>,
  messageCount = Number.POSITIVE_INFINITY,
): boolean {
  if (input.replace !== undefined) return true;
  return (input.truncate ?? messageCount) < messageCount;
}

/**
 * The lineage after a commit over a history of `messageCount` messages: one more rewrite
 * when `commitRewritesHistory`.
 */
export function committedLineage(
  lineage: HistoryLineage,
  input: Pick<CommitInput<unknown>, 'replace' | 'truncate'>,
  messageCount = Number.POSITIVE_INFINITY,
): HistoryLineage {
  // Stryker disable next-line ArithmeticOperator: equivalent — rewrites is only compared for equality with a copy taken earlier, and a step of −1 tells the same states apart as +1.
  return commitRewritesHistory(input, messageCount)
    ? { ...lineage, rewrites: lineage.rewrites + 1 }
    : lineage;
}

/**
 * The lineage after a `save`: a rewrite unless the saved messages extend the stored ones
 * (`extendsHistory`).
 */
export function savedLineage(lineage: HistoryLineage, extended: boolean): HistoryLineage {
  // Stryker disable next-line ArithmeticOperator: equivalent — rewrites is only compared for equality with a copy taken earlier, and a step of −1 tells the same states apart as +1.
  return extended ? lineage : { ...lineage, rewrites: lineage.rewrites + 1 };
}

/**
 * True when `next` begins with every message of `stored`, compared as JSON text (so a
 * message whose keys were reordered counts as changed). `stored` may be given as the JSON
 * texts of the messages (`storedIsJson`), as SQL backends keep them.
 */
export function extendsHistory(
  stored: readonly unknown[],
  next: readonly unknown[],
  storedIsJson = false,
): boolean {
  // A shorter `next` fails at its first missing message (undefined is never equal text).
  // Stryker disable next-line EqualityOperator: equivalent — one more step compares undefined with undefined, or an appended message the count already tells apart.
  for (let i = 0; i < stored.length; i++) {
    const before = storedIsJson ? (stored[i] as string) : JSON.stringify(stored[i]);
    if (before !== JSON.stringify(next[i])) return false;
  }
  return true;
}

/** A parent and a child as a merge sees them. */
/** The header fields a promotion reads (every other field of the child is carried over). */
export type PromotionHeader = Pick<SessionHeader, 'id' | 'parentId' | 'branchedAtTurn'>;

export interface MergeSide {
  header: SessionHeader;
  lineage: HistoryLineage;
}

/** What a merge writes to the parent: its new header and lineage. Messages: the child's. */
export interface MergePlan {
  header: SessionHeader;
  lineage: HistoryLineage;
}

/**
 * The base of a child's lineage. A child stored before lineage existed has none: it reads
 * as based at rewrite 0 with no counters (its merge then gives the parent its own counters).
 */
function baseOf(lineage: HistoryLineage): MergeBase {
  // Stryker disable next-line LogicalOperator,ObjectLiteral: legacy records only — every child written through the contract has a base (file and postgres tests cover stored legacy records).
  return lineage.base ?? { parentRewrites: 0, ownRewrites: 0 };
}

/**
 * The id of the session `child` merges into: its `parentId`. Throws `invalid_argument`
 * when it has none (a root, or a branch promoted to a root by a delete) — call it before
 * reading the parent.
 */
export function parentToMergeInto(
  errors: ErrorFactory,
  child: Pick<SessionHeader, 'id' | 'parentId'>,
): string {
  if (child.parentId === undefined) {
    throw errors.invalid(`merge: session "${child.id}" has no parent to merge into`, child.id);
  }
  return child.parentId;
}

/**
 * The merge rule (the child's parent comes from `parentToMergeInto`). Throws
 * `merge_diverged` (write nothing) when the parent's history changed after the branch
 * point: it has more or fewer messages than the child's `branchedAtTurn` (absent counts
 * as 0), or it was rewritten since the child's base. Otherwise returns the parent's new
 * header: its own fields, `revision + 1`, `updatedAt` moved forward (`invalid_argument`
 * when no later date is left: `nextWriteTime`), and each counter =
 * the parent's + what the branch gained since its base (`mergedCounter`; the child's
 * counters when the base is unknown). The parent's lineage counts a rewrite when the
 * child rewrote its own history since its base (the merge then replaces the parent's
 * prefix). Pure; the caller must hold both sessions still (a lock or a transaction).
 */
export function planMerge(
  errors: ErrorFactory,
  parent: MergeSide & { messageCount: number },
  child: MergeSide,
  now: Date = new Date(),
): MergePlan {
  const childId = child.header.id;
  const at = child.header.branchedAtTurn ?? 0;
  const base = baseOf(child.lineage);
  const parentId = parent.header.id;
  if (parent.messageCount !== at) {
    throw errors.make(
      'merge_diverged',
      `cannot merge "${childId}": parent "${parentId}" has ${parent.messageCount} messages, not the ${at} it was branched at — nothing was written`,
      { sessionId: childId },
    );
  }
  if (parent.lineage.rewrites !== base.parentRewrites) {
    throw errors.make(
      'merge_diverged',
      `cannot merge "${childId}": parent "${parentId}" rewrote its history after the branch — nothing was written`,
      { sessionId: childId },
    );
  }
  const p = parent.header;
  const c = child.header;
  const b = base.counters;
  const header: SessionHeader = {
    ...structuredClone(p),
    tokenCount: b
      ? mergedCounter(errors, childId, 'tokenCount', p.tokenCount, c.tokenCount, b.tokenCount)
      : c.tokenCount,
    costUsd: b
      ? mergedCounter(errors, childId, 'costUsd', p.costUsd, c.costUsd, b.costUsd)
      : c.costUsd,
    turnCount: b
      ? mergedCounter(errors, childId, 'turnCount', p.turnCount, c.turnCount, b.turnCount)
      : c.turnCount,
    revision: p.revision + 1,
    updatedAt: nextWriteTime(errors, parentId, p.updatedAt, now),
  };
  const childRewrote = child.lineage.rewrites !== base.ownRewrites;
  const lineage: HistoryLineage = childRewrote
    ? // Stryker disable next-line ArithmeticOperator: equivalent — rewrites is only compared for equality with a copy taken earlier, and a step of −1 tells the same states apart as +1.
      { ...parent.lineage, rewrites: parent.lineage.rewrites + 1 }
    : parent.lineage;
  return { header, lineage };
}

/**
 * One merged counter: the parent's value plus what the branch gained since its base
 * (`parent + (child − base)`), exact when only one side changed (the other side's value
 * is returned as is, so no rounding creeps into `costUsd`), never below 0. Throws
 * `invalid_argument` when an integer counter would pass `Number.MAX_SAFE_INTEGER` or
 * `costUsd` would not be finite. Pure.
 */
export function mergedCounter(
  errors: ErrorFactory,
  childId: string,
  field: CounterField,
  parent: number,
  child: number,
  base: number,
): number {
  // Stryker disable next-line ConditionalExpression: equivalent — parent + (base − base) is exactly parent; the shortcut only says so.
  if (child === base) return parent;
  // Exact: base + (child − base) may round away from child.
  if (parent === base) return child;
  // Math.max(0, −0) is +0, so no −0 is ever stored.
  const value = Math.max(0, parent + (child - base));
  if (!isCounterValue(field, value)) {
    throw errors.invalid(
      `merge: ${field} of the merged parent would be ${value}, outside the counter's range`,
      childId,
    );
  }
  return value;
}

/**
 * A child of a deleted session, promoted to the deleted session's parent (or to a root).
 * With a new parent: `parentId` = the grandparent's, `branchedAtTurn` = the smaller of
 * its own and the deleted session's (absent on the deleted session counts as 0; a child
 * without one keeps none), and its base becomes the deleted session's base (the
 * grandparent's rewrites and counters when the deleted session branched), with its own
 * rewrites unknown when the deleted session had rewritten its history. Without one
 * (the deleted session was a root, or was its own grandparent): `parentId` and the base
 * are dropped; `branchedAtTurn` is kept. Revision and `updatedAt` do not change. Pure.
 */
export function promotedChild<H extends PromotionHeader>(
  child: { header: H; lineage: HistoryLineage },
  deleted: { header: PromotionHeader; lineage: HistoryLineage },
): { header: H; lineage: HistoryLineage } {
  const { parentId: _old, ...rest } = child.header;
  const grandparentId = deleted.header.parentId;
  if (grandparentId === undefined || grandparentId === child.header.id) {
    return { header: rest as H, lineage: { rewrites: child.lineage.rewrites } };
  }
  const header = { ...rest, parentId: grandparentId } as H;
  if (child.header.branchedAtTurn !== undefined) {
    header.branchedAtTurn = Math.min(
      child.header.branchedAtTurn,
      deleted.header.branchedAtTurn ?? 0,
    );
  }
  const deletedBase = baseOf(deleted.lineage);
  const childBase = baseOf(child.lineage);
  const deletedRewrote = deleted.lineage.rewrites !== deletedBase.ownRewrites;
  const base: MergeBase = {
    parentRewrites: deletedBase.parentRewrites,
    ownRewrites: deletedRewrote ? -1 : childBase.ownRewrites,
  };
  if (deletedBase.counters) base.counters = { ...deletedBase.counters };
  return { header, lineage: { rewrites: child.lineage.rewrites, base } };
}
