import type { SessionSummary, Store } from '@sessionkit/core';

/** Every direct branch of `parentId` (archived included), oldest branch point first. */
export async function childrenOf<M>(store: Store<M>, parentId: string): Promise<SessionSummary[]> {
  const out: SessionSummary[] = [];
  let cursor: { updatedAt: Date; id: string } | undefined;
  for (;;) {
    const page = await store.list({
      parentId,
      includeArchived: true,
      limit: 1000,
      ...(cursor ? { startAfter: cursor } : {}),
    });
    out.push(...page);
    const last = page[page.length - 1];
    if (page.length < 1000 || last === undefined) break;
    cursor = { updatedAt: last.updatedAt, id: last.id };
  }
  return out.sort(
    (a, b) => (a.branchedAtTurn ?? 0) - (b.branchedAtTurn ?? 0) || (a.id < b.id ? -1 : 1),
  );
}
