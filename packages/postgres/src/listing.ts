// Listing and search: one statement over `sessions` and `search_rows` (with its child
// `search_pending`; statements/listing.ts), never message bodies.
import type { SessionSummary } from '@sessionkit/core';
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { type HeaderRow, summaryOf } from './rows.js';
import { buildListQuery } from './statements/listing.js';

/**
 * The summaries `opts` (normalized by core) selects, in its order. Throws
 * `invalid_argument` for a `query` when the schema's search scope is `none`: the store
 * keeps no search text, and an empty result would claim that nothing matched.
 */
export async function listSessions(
  ctx: StoreContext,
  opts: NormalizedListOptions,
): Promise<SessionSummary[]> {
  if (opts.query !== undefined && ctx.search.scope === 'none') {
    throw errors.invalid(
      'list: this store keeps no search text (search scope "none"): a query cannot be answered; open the store with search "titles" or "messages" to search',
    );
  }
  const r = await ctx.db.queryConfig<HeaderRow>(buildListQuery(ctx.statements.s, opts), {
    doing: 'list',
  });
  return r.rows.map(summaryOf);
}
