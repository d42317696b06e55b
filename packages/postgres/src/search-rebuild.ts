// Rebuilding one session's search data from scratch, inside the caller's transaction: a
// scope change (search-scope.ts, under the migration lock) and repair (under the session's
// row lock) write the chunks and words at once instead of leaving them pending.
import type { PoolClient } from 'pg';
import { type PendingText, planIndex } from './search-index-plan.js';
import { writeIndexPlan } from './search-index-writes.js';
import type { SearchChunks } from './search-rows.js';
import { searchRowDeletes } from './statements/search.js';

/**
 * Gives session `id` of schema `s` (quoted) a new search epoch and `titleText` as its
 * `title_search`, deletes its search rows (pending rows an indexer holds are left: they
 * carry the old epoch), and writes `rows` (the search texts of its messages,
 * `searchChunksIn`) and the title's words as indexed rows. Nothing when `id` is gone.
 */
export async function rebuildSessionSearch(
  client: PoolClient,
  s: string,
  id: string,
  rows: SearchChunks,
  titleText: string,
): Promise<void> {
  const r = await client.query<{ epoch: string }>(
    `UPDATE ${s}.sessions SET search_epoch = nextval('${s}.search_epochs'::regclass),
       title_search = $2 WHERE id = $1 RETURNING search_epoch::text AS epoch`,
    [id, titleText],
  );
  const epoch = r.rows[0]?.epoch;
  if (epoch === undefined) return;
  await client.query(`WITH ${searchRowDeletes(s, 'q.session_id = $1')} SELECT 1`, [id]);
  const texts: PendingText[] = rows.seqs.map((seq, i) => ({
    sessionId: id,
    epoch,
    seq,
    nextSeq: rows.nexts[i]!,
    text: rows.texts[i]!,
  }));
  if (titleText !== '')
    texts.unshift({ sessionId: id, epoch, seq: -1, nextSeq: -1, text: titleText });
  await writeIndexPlan(
    client,
    s,
    planIndex(texts, () => undefined),
  );
}
