// `list({query})`: the index's candidates in listing order, each matched against its title
// and then its `search.txt`, read only until the page is full.

import { readFileSync } from 'node:fs';
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import { matchesListFilters, searchTextMatches, titleMatchesQuery } from '@sessionkit/core/adapter';
import { decodeSearchFile } from '../format/search-codec.js';
import type { IndexState, Listable } from '../index-log/state.js';
import { isEnoent } from '../io/fs-helpers.js';
import type { StoreContext } from '../store/context.js';

/**
 * The page of `opts` (which has a `query`). Filters, cursor and order are core's (the
 * index's `scan` and `matchesListFilters` without the query); the query is matched like
 * core's `matchesListFilters` does, the title first, the search file only when the title
 * does not match, newest (or oldest) first, until `offset + limit` hits are found. The
 * search files are read synchronously: the walk over the index must not let another call
 * change the index under it. Cost: one small file read per candidate searched.
 */
export function searchPage(
  ctx: StoreContext,
  index: IndexState,
  opts: NormalizedListOptions,
): Listable[] {
  const { query, ...rest } = opts;
  const want = opts.offset + opts.limit;
  const hits: Listable[] = [];
  // Candidates in listing order from the index (no sort), read until the page is full.
  for (const l of index.listable.scan(rest)) {
    if (hits.length >= want) break;
    if (!matchesListFilters(l, rest)) continue;
    if (query === undefined || titleMatchesQuery(l.title, query)) {
      hits.push(l);
      continue;
    }
    let text = '';
    try {
      text = decodeSearchFile(readFileSync(ctx.sessionPaths(l.id).search)).text;
    } catch (e) {
      if (!isEnoent(e)) throw e;
    }
    if (searchTextMatches(text, query)) hits.push(l);
  }
  return hits.slice(opts.offset, want);
}
