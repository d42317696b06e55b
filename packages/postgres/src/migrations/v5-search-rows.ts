// Version 6's conversion of version 5's search rows (`search_rows` and its child
// `search_pending`, renamed `*_v5` by the migration's SQL): each session's texts, in
// order, become chunks and block words (search-index-plan.ts), its title's words a words
// row; then the old tables are dropped. Reads search text only, never message bodies.
import type { PoolClient } from 'pg';
import { planIndex } from '../search-index-plan.js';
import { pendingTextsOf, writeIndexPlan } from '../search-index-writes.js';

// Sessions per batch.
const BATCH = 200;

/** Converts every session's version 5 search rows, in batches, inside the migration's transaction. */
export async function convertV5SearchRows(client: PoolClient, s: string): Promise<void> {
  let after = '';
  for (;;) {
    const page = await client.query<{ id: string }>(
      `SELECT id FROM ${s}.sessions WHERE id > $1::text COLLATE "C" ORDER BY id LIMIT ${BATCH}`,
      [after],
    );
    if (page.rows.length === 0) break;
    const ids = page.rows.map((r) => r.id);
    // A row's messages run to the next row's first message, the last row's to the end.
    const rows = await client.query(
      `SELECT r.session_id, x.search_epoch::text AS epoch, r.seq,
         coalesce(lead(r.seq) OVER (PARTITION BY r.session_id ORDER BY r.seq), x.message_count)
           AS next_seq, r.text
       FROM ${s}.search_rows_v5 AS r JOIN ${s}.sessions AS x ON x.id = r.session_id
       WHERE r.session_id = ANY ($1::text[]) AND r.seq >= 0
       UNION ALL
       SELECT x.id, x.search_epoch::text, -1, -1, x.title_search FROM ${s}.sessions AS x
       WHERE x.id = ANY ($1::text[]) AND x.title_search <> ''
       ORDER BY 1, 2, 3`,
      [ids],
    );
    await writeIndexPlan(
      client,
      s,
      planIndex(pendingTextsOf(rows.rows), () => undefined),
    );
    after = ids[ids.length - 1]!;
  }
  await client.query(`DROP TABLE ${s}.search_rows_v5 CASCADE`);
}
