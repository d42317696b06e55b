// applyHistoryMutations on sessionkit: the SDK's own rewrite over the stored history,
// written back as one commit that keeps the unchanged prefix.
import {
  type AgentInputItem,
  applySessionHistoryMutations,
  type SessionHistoryRewriteArgs,
} from '@openai/agents-core';
import { canonicalJson } from './canonical-json.js';
import { errors } from './errors.js';
import type { SessionHistory } from './session-history.js';

/**
 * Applies `replace_function_call` mutations with the SDK's `applySessionHistoryMutations`
 * (the first function call with the `callId` becomes the replacement, later calls with
 * that id are dropped). Reads the whole history once (a call can be anywhere in it), then
 * one commit under the revision it read keeps the unchanged prefix and rewrites the rest
 * (`truncate` + `append`); a concurrent writer makes it read again. No mutation, or none
 * that changes anything, writes nothing. Throws `invalid_argument` (arguments that are not
 * a mutation list, a replacement that is not JSON), and what the store throws.
 */
export async function applyHistoryMutations(
  history: SessionHistory,
  args: SessionHistoryRewriteArgs,
): Promise<void> {
  if (typeof args !== 'object' || args === null || !Array.isArray(args.mutations)) {
    throw errors.invalid('applyHistoryMutations: arguments must be { mutations: [...] }');
  }
  const mutations = JSON.parse(canonicalJson(args.mutations, 'applyHistoryMutations'));
  if (mutations.length === 0) return;
  await history.optimistically('applyHistoryMutations', async () => {
    const stored = await history.window(undefined);
    const items = stored.messages as AgentInputItem[];
    const next = applySessionHistoryMutations(items, mutations);
    const keep = unchangedPrefix(items, next);
    if (keep === items.length && keep === next.length) return undefined;
    return history.commitOver(stored, { truncate: keep, append: next.slice(keep) });
  });
}

/** How many leading items two histories share. */
function unchangedPrefix(a: readonly unknown[], b: readonly unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (canonicalJson(a[i], 'history') !== canonicalJson(b[i], 'history')) return i;
  }
  return n;
}
