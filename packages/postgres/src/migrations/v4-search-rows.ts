// The search rows of schema versions 4 and 5 (table `search_rows`): per commit, the texts of
// consecutive messages, each as core's `searchTextOf` writes it, plus the title at seq -1.
// Only migration 4 writes them now (version 6 converts them, see v5-search-rows.ts).
import type { PoolClient } from 'pg';
import { searchChunks } from '../search-rows.js';

/**
 * Rewrites the message search rows of every session from its stored messages, in pages of
 * sessions, inside the caller's transaction (the version 4 migration: rows written by
 * earlier versions joined messages with a newline, so a query could match across two
 * messages). A session whose bodies do not parse keeps its rows (`repair()` reports it).
 */
export async function rebuildAllSearchRows(client: PoolClient, s: string): Promise<void> {
  let after = '';
  for (;;) {
    const page = await client.query<{ id: string }>(
      `SELECT id FROM ${s}.sessions WHERE id > $1::text COLLATE "C" ORDER BY id LIMIT 100`,
      [after],
    );
    if (page.rows.length === 0) return;
    for (const { id } of page.rows) await rebuildV4Rows(client, s, id);
    after = page.rows[page.rows.length - 1]!.id;
  }
}

/** Rewrites one session's version 4 message search rows; false when a body does not parse. */
async function rebuildV4Rows(client: PoolClient, s: string, id: string): Promise<boolean> {
  const r = await client.query<{ body: string }>(
    `SELECT body FROM ${s}.messages WHERE session_id = $1 ORDER BY seq`,
    [id],
  );
  const messages: unknown[] = [];
  for (const row of r.rows) {
    try {
      messages.push(JSON.parse(row.body));
    } catch {
      return false;
    }
  }
  const chunks = searchChunks(messages);
  await client.query(`DELETE FROM ${s}.search_rows WHERE session_id = $1 AND seq >= 0`, [id]);
  if (chunks.seqs.length === 0) return true;
  await client.query(
    `INSERT INTO ${s}.search_rows (session_id, seq, text)
     SELECT $1, u.o, u.t FROM unnest($2::integer[], $3::text[]) AS u(o, t)`,
    [id, chunks.seqs, chunks.texts],
  );
  return true;
}
