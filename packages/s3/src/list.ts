// list(): summaries from the index shards alone; a query reads the search-text objects
// of candidates in listing order, only until the page is full. Never message bodies.
import type { SessionSummary } from '@sessionkit/core';
import { isSessionKitError } from '@sessionkit/core';
import {
  compareIds,
  compareListOrder,
  isAfterCursor,
  matchesListFilters,
  type NormalizedListOptions,
  searchTextMatches,
  titleMatchesQuery,
} from '@sessionkit/core/adapter';
import type { IndexEntry } from './codec.js';
import type { StoreContext } from './context.js';
import { readListedSearchTexts } from './history.js';
import { readCurrent } from './session-log.js';

/** The index after healing the entries of sessions with write markers. */
export async function indexView(ctx: StoreContext): Promise<Map<string, IndexEntry>> {
  // Both at once: without markers (the usual case) the index as read is the answer.
  const [healed, entries] = await Promise.all([ctx.index.heal(), ctx.index.readAll()]);
  return healed ? ctx.index.readAll() : entries;
}

/** The ids whose parent is `id`, ascending in byte order. */
export function childrenIn(entries: Map<string, IndexEntry>, id: string): string[] {
  const out: string[] = [];
  for (const [childId, e] of entries) if (e.header.parentId === id) out.push(childId);
  return out.sort(compareIds);
}

/**
 * The ids whose parent is `id` (ascending in byte order), as of every write acknowledged
 * before the call: the index, and the newest version of each marked session whose parent
 * a write may have changed without its entry yet. A session's parent is set when it is
 * created and changed only when its parent is deleted (promotion); both mark the session
 * and the deleted parent, so an entry with an indexed, unmarked parent other than `id`
 * is current as far as the children of `id` go, and so is `id`'s own entry. Writes no
 * entry (`list` heals them). Throws `unavailable`.
 */
export async function childrenOf(ctx: StoreContext, id: string): Promise<string[]> {
  const [marked, entries] = await Promise.all([ctx.index.markedIds(), ctx.index.readAll()]);
  const children = new Set(childrenIn(entries, id));
  const unsure = [...marked].filter((m) => {
    if (m === id) return false;
    const parent = entries.get(m)?.header.parentId;
    if (!entries.has(m) || parent === id) return true;
    return parent !== undefined && (!entries.has(parent) || marked.has(parent));
  });
  await Promise.all(
    unsure.map(async (m) => {
      // A session that cannot be read keeps what its entry says until repair() judges it.
      const current = await readCurrent(ctx.io, m).catch((e: unknown) => {
        if (isSessionKitError(e, 'corrupt')) return 'unreadable' as const;
        throw e;
      });
      if (current === 'unreadable') return;
      if (current !== undefined && !current.tombstone && current.state.header.parentId === id) {
        children.add(m);
      } else children.delete(m);
    }),
  );
  return [...children].sort(compareIds);
}

/** A caller-owned summary of an entry. */
export function summaryOf(entries: Map<string, IndexEntry>, e: IndexEntry): SessionSummary {
  return {
    ...structuredClone(e.header),
    messageCount: e.messageCount,
    children: childrenIn(entries, e.header.id),
  };
}

/** Filters, orders and pages the index as `Store.list` must. */
export async function listSessions(
  ctx: StoreContext,
  opts: NormalizedListOptions,
): Promise<SessionSummary[]> {
  const entries = await indexView(ctx);
  const candidates: IndexEntry[] = [];
  // Every filter but the query, which may need the search text.
  const { query, ...withoutQuery } = opts;
  for (const e of entries.values()) {
    const listable = { ...e.header, searchText: '' };
    if (!matchesListFilters(listable, withoutQuery)) continue;
    if (opts.startAfter && !isAfterCursor(e.header, opts.startAfter, opts.oldestFirst)) continue;
    candidates.push(e);
  }
  candidates.sort((a, b) => compareListOrder(a.header, b.header, opts.oldestFirst));
  const wanted = opts.offset + opts.limit;
  const hits: IndexEntry[] = [];
  if (query === undefined) hits.push(...candidates.slice(0, wanted));
  else {
    for (const e of candidates) {
      if (hits.length >= wanted) break;
      if (titleMatchesQuery(e.header.title, query)) hits.push(e);
      else {
        const texts = await readListedSearchTexts(ctx.io, e.header.id, e.gen, e.chain);
        if (texts !== undefined && searchTextMatches(texts, query)) hits.push(e);
      }
    }
  }
  return hits.slice(opts.offset, wanted).map((e) => summaryOf(entries, e));
}
