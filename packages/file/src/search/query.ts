// `list({query})`: the index's candidates in listing order, each matched against its title
// and then its `search.txt`, read only until the page is full.

import { promises as fsp } from 'node:fs';
import type { ListableEntry, NormalizedListOptions } from '@sessionkit/core/adapter';
import { searchTextMatches, selectPage, titleMatchesQuery } from '@sessionkit/core/adapter';
import type { IndexEntryJson } from '../format/records.js';
import { decodeSearchFile } from '../format/search-codec.js';
import type { IndexState } from '../index-log/state.js';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';

type Listable = ListableEntry & { entry: IndexEntryJson };

/**
 * The page of `opts` (which has a `query`). Filters, cursor and order are core's
 * (`selectPage` without the query and without paging); the query is matched like core's
 * `matchesListFilters` does, the title first, the search file only when the title does
 * not match, newest (or oldest) first, until `offset + limit` hits are found.
 */
export async function searchPage(
  ctx: StoreContext,
  index: IndexState,
  opts: NormalizedListOptions,
): Promise<Listable[]> {
  const { query, ...rest } = opts;
  const candidates = selectPage(index.listable.values(), {
    ...rest,
    offset: 0,
    limit: Number.POSITIVE_INFINITY,
  });
  const want = opts.offset + opts.limit;
  const hits: Listable[] = [];
  for (const l of candidates) {
    if (hits.length >= want) break;
    if (query === undefined || titleMatchesQuery(l.title, query)) {
      hits.push(l);
      continue;
    }
    let text = '';
    try {
      text = decodeSearchFile(await fsp.readFile(ctx.sessionPaths(l.id).search)).text;
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
    if (searchTextMatches(text, query)) hits.push(l);
  }
  return hits.slice(opts.offset, want);
}
