// Listing and search: one statement over `sessions` and `search_rows` (statements/listing.ts),
// never message bodies.
import type { SessionSummary } from '@sessionkit/core';
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import type { StoreContext } from './context.js';
import { type HeaderRow, summaryOf } from './rows.js';
import { buildListQuery } from './statements/listing.js';

/** The summaries `opts` (normalized by core) selects, in its order. */
export async function listSessions(
  ctx: StoreContext,
  opts: NormalizedListOptions,
): Promise<SessionSummary[]> {
  const r = await ctx.db.queryConfig<HeaderRow>(buildListQuery(ctx.statements.s, opts), {
    doing: 'list',
  });
  return r.rows.map(summaryOf);
}
