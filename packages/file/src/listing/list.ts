// `list`: summaries from the index, filtered, ordered and paged by core's rules.

import type { SessionSummary } from '@sessionkit/core';
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import { summaryFromEntry } from '../format/records.js';
import { refreshIndex } from '../index-log/refresh.js';
import { searchPage } from '../search/query.js';
import type { StoreContext } from '../store/context.js';

/** The page `opts` asks for (caller-owned summaries with their children). */
export async function listSessions(
  ctx: StoreContext,
  opts: NormalizedListOptions,
): Promise<SessionSummary[]> {
  const index = await refreshIndex(ctx);
  const page = opts.query === undefined ? index.listable.page(opts) : searchPage(ctx, index, opts);
  return page.map((l) => summaryFromEntry(structuredClone(l.entry), index.listable.children(l.id)));
}
