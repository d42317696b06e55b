// The branch tree holding a session: up its parent links to the root, then down through
// `list({ parentId })`, with each branch's merge state against its parent. Built from
// summaries and one-message windows, never from whole transcripts.
import {
  isHistoryReader,
  isSessionKitError,
  loadMessageWindow,
  type SessionSummary,
  type Store,
} from '@sessionkit/core';
import { childrenOf } from '../commands/tree-walk.js';
import { canonicalJson } from '../migrate/digest.js';
import type { SummaryFinder } from './summaries.js';

/** At most this many sessions are shown in one tree. */
export const MAX_TREE_NODES = 500;
/** Merge states are worked out for at most this many branches of one tree. */
export const MAX_MERGE_CHECKS = 100;
/** Parent links followed up from a session, at most. */
const MAX_DEPTH = 200;

/** Where a branch stands against its parent, as far as summaries and a message tell. */
export interface MergeState {
  kind: 'merged' | 'ahead' | 'even' | 'diverged' | 'unknown';
  /** For people: "3 new messages, can be merged", "merged into the parent" … */
  label: string;
}

/** A session in the tree and the branches under it. */
export interface TreeNode {
  summary: SessionSummary;
  /** The branch's state against the parent node (absent on the root). */
  merge: MergeState | undefined;
  children: TreeNode[];
}

/** A whole tree. `truncated` when it had more than `MAX_TREE_NODES` sessions. */
export interface BranchTree {
  root: TreeNode;
  truncated: boolean;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Message `index` of `id`, through a window of one. */
async function messageAt(store: Store<unknown>, id: string, index: number): Promise<string> {
  const window = await loadMessageWindow(store, id, { offset: index, limit: 1 });
  return canonicalJson(window.messages[0] ?? null);
}

/**
 * The merge state of `child` against `parent`. A merge fast-forwards the parent to the
 * branch's messages, so when the parent has moved past the branch point, the parent holds
 * the branch's history ("merged") exactly when their last shared position holds the same
 * message; otherwise the parent's history went its own way ("diverged").
 */
export async function mergeState(
  store: Store<unknown>,
  parent: SessionSummary,
  child: SessionSummary,
): Promise<MergeState> {
  const at = child.branchedAtTurn;
  if (at === undefined) return { kind: 'unknown', label: 'forked (no branch point)' };
  const gained = child.messageCount - at;
  if (parent.messageCount === at) {
    if (gained === 0) return { kind: 'even', label: 'no new messages' };
    const what = gained > 0 ? plural(gained, 'new message') : 'history rewritten';
    return { kind: 'ahead', label: `${what}, can be merged` };
  }
  const shared = Math.min(parent.messageCount, child.messageCount);
  if (parent.messageCount < at || shared <= at) {
    return { kind: 'diverged', label: 'the parent changed after the branch point' };
  }
  if (!isHistoryReader(store)) return { kind: 'unknown', label: 'parent moved on' };
  const [p, c] = await Promise.all([
    messageAt(store, parent.id, shared - 1),
    messageAt(store, child.id, shared - 1),
  ]);
  if (p !== c) return { kind: 'diverged', label: 'the parent changed after the branch point' };
  if (child.messageCount > shared) {
    return {
      kind: 'merged',
      label: `merged; ${plural(child.messageCount - shared, 'new message')} since`,
    };
  }
  return { kind: 'merged', label: 'merged into the parent' };
}

/** The root above `id`: parent links followed while the parent exists. */
async function rootSummary(
  store: Store<unknown>,
  summaries: SummaryFinder,
  id: string,
): Promise<SessionSummary> {
  let current = await summaries.find(store, id);
  const seen = new Set([current.id]);
  for (let depth = 0; current.parentId && depth < MAX_DEPTH; depth++) {
    if (seen.has(current.parentId)) break;
    try {
      current = await summaries.find(store, current.parentId);
    } catch (e) {
      if (isSessionKitError(e, 'not_found')) break;
      throw e;
    }
    seen.add(current.id);
  }
  return current;
}

/**
 * The tree holding `id`, from its root, breadth first (so a cut tree keeps the levels
 * nearest the root), each session once, branches ordered by branch point.
 */
export async function branchTree(
  store: Store<unknown>,
  summaries: SummaryFinder,
  id: string,
): Promise<BranchTree> {
  const root: TreeNode = {
    summary: await rootSummary(store, summaries, id),
    merge: undefined,
    children: [],
  };
  const seen = new Set([root.summary.id]);
  const queue = [root];
  let nodes = 1;
  let checks = 0;
  let truncated = false;
  for (let next = queue.shift(); next; next = queue.shift()) {
    // A summary lists its children's ids: a leaf needs no `list({ parentId })`.
    if (next.summary.children.length === 0) continue;
    const branches = await childrenOf(store, next.summary.id);
    summaries.remember(branches);
    for (const b of branches) {
      if (seen.has(b.id)) continue;
      if (nodes >= MAX_TREE_NODES) {
        truncated = true;
        break;
      }
      seen.add(b.id);
      nodes++;
      const merge =
        checks++ < MAX_MERGE_CHECKS
          ? await mergeState(store, next.summary, b)
          : { kind: 'unknown' as const, label: 'not checked (large tree)' };
      const node: TreeNode = { summary: b, merge, children: [] };
      next.children.push(node);
      queue.push(node);
    }
  }
  return { root, truncated };
}
