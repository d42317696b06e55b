// Listing and search: one statement over `sessions` and the search tables
// (statements/listing.ts), never message bodies. A search first counts, through the
// trigram index, the words rows its two best word patterns match, to choose how the
// statement finds its sessions; the statement itself is exact either way.
import type { SessionSummary } from '@sessionkit/core';
import type { NormalizedListOptions } from '@sessionkit/core/adapter';
import { type HeaderRow, summaryOf } from './codec.js';
import type { StoreContext } from './context.js';
import { errors } from './errors.js';
import { queryRuns } from './search-words.js';
import { buildListQuery, type SearchPlan } from './statements/listing.js';

/**
 * Words rows a pattern may match for the search to start from them; past this the pattern
 * is common, and checking sessions in list order finds a page sooner.
 */
const WORDS_CANDIDATES = 2000;

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
  const plan = opts.query === undefined ? undefined : await searchPlanOf(ctx, opts.query);
  const statement = buildListQuery(ctx.statements.s, opts, plan);
  // A page without a query runs as a prepared statement: planning the listing took
  // several times its execution (0.43 ms against 0.08 ms for 20 of 10,000). A search
  // stays unprepared, planned for its own pattern (a generic plan knows no pattern).
  const config =
    plan === undefined
      ? { ...statement, name: ctx.statements.listName(statement.text) }
      : statement;
  const r = await ctx.db.queryConfig<HeaderRow>(config, { doing: 'list' });
  return r.rows.map((row) => summaryOf(row, false));
}

/**
 * `words` from whichever of the query's two best word patterns fewer words rows match,
 * when few do; else `walk`.
 */
async function searchPlanOf(ctx: StoreContext, query: string): Promise<SearchPlan> {
  let best: { pattern: string; n: number } | undefined;
  for (const run of queryRuns(query).slice(0, 2)) {
    const r = await ctx.db.query(
      ctx.statements.search.wordsMatchCount,
      [run.pattern, WORDS_CANDIDATES + 1],
      { doing: 'list' },
    );
    const n = r.rows[0]?.n ?? 0;
    if (best === undefined || n < best.n) best = { pattern: run.pattern, n };
  }
  return best === undefined || best.n > WORDS_CANDIDATES
    ? { kind: 'walk' }
    : { kind: 'words', wordsPattern: best.pattern };
}
