// Derived children. The index keeps, per parent, a set of ids that may name it; each
// child's own `p` field decides. A set can hold a stale id (a process died mid-delete or
// mid-promotion) but never lacks a real child: links are added before a child is written.
import { compareIds } from '@sessionkit/core/adapter';
import { call, command } from './calls.js';
import type { StoreContext } from './context.js';
import { SCRIPTS } from './lua/index.js';

/** The children of each of `parentIds` (ascending ids), read from the index and checked. */
export async function childrenOf(
  ctx: StoreContext,
  parentIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (parentIds.length === 0) return out;
  const sets = await call<string[][]>(
    ctx,
    SCRIPTS.readChildren,
    parentIds.map((id) => ctx.keys.children(id)),
    [],
    'reading children',
  );
  const candidates = [...new Set(sets.flat())];
  const parents = await Promise.all(candidates.map((c) => parentOf(ctx, c)));
  const parentOfCandidate = new Map(candidates.map((c, i) => [c, parents[i]]));
  parentIds.forEach((parentId, i) => {
    const kids = (sets[i] ?? []).filter((c) => parentOfCandidate.get(c) === parentId);
    out.set(parentId, kids.sort(compareIds));
  });
  return out;
}

/** The children of one session. */
export async function childrenOfOne(ctx: StoreContext, id: string): Promise<string[]> {
  return (await childrenOf(ctx, [id])).get(id) ?? [];
}

/** The `p` field of a session (its parent id, `''` for none), `null` when it does not exist. */
async function parentOf(ctx: StoreContext, id: string): Promise<string | null> {
  return command(ctx, `reading session "${id}"`, () =>
    ctx.client.hget(ctx.keys.session(id).meta, 'p'),
  );
}
