// `list`: summaries from the index, filtered, ordered and paged by core's rules.

import type { SessionSummary } from '@sessionkit/core';
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import { selectPage } from '@sessionkit/core/adapter';
import { summaryFromEntry } from '../format/records.js';
import { childrenMap } from '../index-log/children.js';
import { refreshIndex } from '../index-log/refresh.js';
import { searchPage } from '../search/query.js';
import type { StoreContext } from '../store/context.js';

/** The page `opts` asks for (caller-owned summaries with their children). */
export async function listSessions(
  ctx: StoreContext,
  opts: NormalizedListOptions,
): Promise<SessionSummary[]> {
  const index = await refreshIndex(ctx);
  const page =
    opts.query === undefined
      ? selectPage(index.listable.values(), opts)
      : await searchPage(ctx, index, opts);
  const children = childrenMap(index);
  return page.map((l) =>
    summaryFromEntry(structuredClone(l.entry), [...(children.get(l.id) ?? [])]),
  );
}
